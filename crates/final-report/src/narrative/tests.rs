//! Table tests of the claim grammar.

use super::claim::ClaimKind as Claim;
use super::*;

fn asserted(n: &Narrative) -> Vec<Claim> {
    n.claims()
        .filter(|c| c.asserted())
        .map(|c| c.kind)
        .collect()
}

fn claims(text: &str) -> Vec<Claim> {
    let mut out = asserted(&Narrative::parse(text));
    out.dedup();
    out
}

fn unchecked(n: &Narrative) -> Vec<String> {
    n.sentences()
        .iter()
        .filter_map(SentenceRead::unchecked)
        .collect()
}

#[test]
fn claim_phrases_are_found_and_negations_dropped() {
    use Claim::*;
    let table: &[(&str, &[Claim])] = &[
        ("PR #4 was merged into main.", &[Merged]),
        ("PR #4 was not merged.", &[]),
        ("No review was submitted, nothing was merged.", &[]),
        ("No findings, so I merged the branch.", &[Merged]),
        ("It wasn't merged.", &[]),
        ("It is ready to be merged.", &[ReadyState]),
        ("It will be merged by the controller.", &[]),
        ("Another reviewer approved and merged it concurrently.", &[]),
        (
            "It was approved by @alice; merged by this session.",
            &[Merged],
        ),
        ("I approved the pull request.", &[Approved]),
        ("The review is PENDING, never APPROVED.", &[]),
        ("The full test suite passed.", &[FullSuitePassed]),
        ("Not all tests passed.", &[]),
        ("All 120 tests passed.", &[FullSuitePassed]),
        ("Issue #12 is now closed.", &[IssueClosed]),
        ("Issue #12 was not closed.", &[]),
        ("The inventory is complete.", &[InventoryComplete]),
        (
            "The failure is pre-existing on main.",
            &[FailurePreExisting],
        ),
        ("Same as master.", &[FailurePreExisting]),
        (
            "All validation ran in an isolated worktree.",
            &[IsolatedWorktreeOnly],
        ),
        ("Strict compliance with the policy.", &[StrictCompliance]),
        (
            "The session stopped and failed closed.",
            &[BlockedOrStopped],
        ),
        ("The merge is not blocked.", &[]),
        ("Nothing to see; ready to merge", &[ReadyState]),
        ("Not ready to merge.", &[]),
        ("Safe to merge.", &[ReadyState]),
        ("Good to merge.", &[ReadyState]),
        ("This can be merged now.", &[ReadyState]),
        ("Mergeable.", &[ReadyState]),
        ("Ready to land.", &[ReadyState]),
        ("Not safe to merge.", &[]),
        ("It cannot be merged yet.", &[]),
        ("This PR is merge-ready.", &[ReadyState]),
        ("The change is good to go.", &[ReadyState]),
        ("Nothing blocks merging this PR.", &[ReadyState]),
        ("This PR can now be landed.", &[ReadyState]),
        ("LGTM, ship it.", &[ReadyState]),
        ("It is not good to go.", &[]),
        (
            "Everything is green, approved.",
            &[Approved, FullSuitePassed],
        ),
        ("Validation: PASS", &[FullSuitePassed]),
        ("PR #12 was merged last week.", &[]),
        (
            "I test-merged origin/main into a scratch branch and aborted it.",
            &[],
        ),
    ];
    for (text, expected) in table {
        assert_eq!(claims(text), *expected, "{text}");
    }
}

#[test]
fn claims_about_other_changes_are_set_aside_with_a_reason() {
    let subject = Reviewed {
        pull_request: Some(42),
    };
    let table: &[(&str, &[Claim], bool)] = &[
        ("Merged PR #42 into main.", &[Claim::Merged], false),
        ("PR #12, which was merged last week, broke this.", &[], true),
        ("It was introduced by PR 9, merged in March.", &[], true),
        ("The same module was merged two weeks ago.", &[], true),
        ("I test-merged origin/main and aborted it.", &[], true),
        // Set aside, and so reported (docs: attributed acts are warnings).
        ("Merged by another agent.", &[], true),
        ("The change landed.", &[], true),
        ("212 passed, 0 failed.", &[], false),
        ("Nothing was merged.", &[], false),
    ];
    for (text, expected, warned) in table {
        let n = Narrative::parse_about(text, subject);
        let got = asserted(&n);
        assert_eq!(got, *expected, "{text}");
        assert_eq!(
            !unchecked(&n).is_empty(),
            *warned,
            "{text}: {:?}",
            unchecked(&n)
        );
    }
}

#[test]
fn qualifiers_qualify_only_their_clause_and_noun_phrase() {
    let subject = Reviewed {
        pull_request: Some(42),
    };
    // (sentence, claims, warned)
    let table: &[(&str, &[Claim], bool)] = &[
        // A qualifier inside a prepositional phrase after the verb, or in another
        // clause, leaves a first-person claim a claim.
        (
            "I merged it into main after the earlier CI run.",
            &[Claim::Merged],
            false,
        ),
        (
            "Another look was not needed, so I merged it.",
            &[Claim::Merged],
            false,
        ),
        ("After another review I merged it.", &[Claim::Merged], false),
        (
            "I merged it after the earlier PR was merged.",
            &[Claim::Merged],
            false,
        ),
        (
            "I approved it yesterday's way: approved.",
            &[Claim::Approved],
            false,
        ),
        // A qualifier of the subject, the object, the agent or the whole clause
        // still sets the claim aside.
        ("Another reviewer merged an earlier PR.", &[], true),
        ("I merged another PR first.", &[], true),
        ("Merged by another agent.", &[], true),
        ("Someone merged it while I was reviewing.", &[], true),
        ("It was merged earlier.", &[], true),
        ("Two weeks ago, it was merged.", &[], true),
        (
            "Yesterday's release was merged from the release branch.",
            &[],
            true,
        ),
        ("The earlier change was merged last week.", &[], true),
        (
            "I approved it after another reviewer merged it.",
            &[Claim::Approved],
            true,
        ),
    ];
    for (text, expected, warned) in table {
        let n = Narrative::parse_about(text, subject);
        let got = asserted(&n);
        assert_eq!(got, *expected, "{text}");
        assert_eq!(
            !unchecked(&n).is_empty(),
            *warned,
            "{text}: {:?}",
            unchecked(&n)
        );
    }
}

#[test]
fn pushes_to_the_target_and_fast_forwards_are_merges() {
    use Claim::*;
    let table: &[(&str, &[Claim])] = &[
        ("I pushed the branch to main directly.", &[Merged]),
        ("It was fast-forwarded into main.", &[Merged]),
        ("I force-pushed it to origin/master.", &[Merged]),
        ("I fast-forwarded main to the PR head.", &[Merged]),
        ("Main was fast-forwarded to c0ffee1.", &[Merged]),
        ("I pushed the fix to the target branch.", &[Merged]),
        ("It can be fast-forwarded into main.", &[]),
        ("Nothing was pushed to main.", &[]),
        ("I did not push to main.", &[]),
        ("I pushed the review notes to the PR branch, not main.", &[]),
        ("I fast-forwarded my worktree to the PR head.", &[]),
        ("Earlier, main was fast-forwarded by the release bot.", &[]),
    ];
    for (text, expected) in table {
        assert_eq!(claims(text), *expected, "{text}");
    }
}

#[test]
fn passing_and_green_phrasings_are_pass_claims() {
    use Claim::*;
    let table: &[(&str, &[Claim])] = &[
        (
            "The test suite is passing; nothing left to do but merge.",
            &[FullSuitePassed],
        ),
        ("All tests are passing.", &[FullSuitePassed]),
        ("The suite passes on the PR head.", &[FullSuitePassed]),
        ("CI is passing.", &[FullSuitePassed]),
        ("All checks are passing.", &[FullSuitePassed]),
        ("Everything is passing.", &[FullSuitePassed]),
        ("All green.", &[FullSuitePassed]),
        ("Tests were not run.", &[]),
        ("The tests are not passing.", &[]),
        ("No tests are passing yet.", &[]),
        ("Once the suite is passing, I will report back.", &[]),
    ];
    for (text, expected) in table {
        assert_eq!(claims(text), *expected, "{text}");
    }
}

#[test]
fn labels_carry_their_value_and_negative_values_deny_the_claim() {
    assert_eq!(claims("- **Merged:** yes"), [Claim::Merged]);
    assert_eq!(claims("- **Merged:** no"), Vec::<Claim>::new());
    assert_eq!(
        claims("Inventory complete: false (INVENTORY_PAGINATION_UNPROVEN)"),
        Vec::<Claim>::new()
    );
    let n = Narrative::parse(
        "# Title\n> **Workspace mutations**: none\n| Scratch worktree used | yes |\nhttp://x: y",
    );
    let names: Vec<&str> = n.labels().iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["workspace mutations", "scratch worktree used"]);
    assert_eq!(n.labels()[0].value, "none");
    assert_eq!(n.labels()[1].value, "yes");
}

#[test]
fn files_reviewed_reads_inline_lists_counts_and_items() {
    let cases: &[(&str, FilesClaim)] = &[
        (
            "Files reviewed: `a.rs`, b/c.rs",
            FilesClaim::List(vec!["a.rs".into(), "b/c.rs".into()]),
        ),
        ("Files reviewed: 3", FilesClaim::Count(3)),
        (
            "**Files reviewed:**\n\n- `a.rs`\n- b.rs\n\nMore prose.",
            FilesClaim::List(vec!["a.rs".into(), "b.rs".into()]),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(
            Narrative::parse(text).files_reviewed().as_ref(),
            Some(expected),
            "{text}"
        );
    }
    assert_eq!(Narrative::parse("no label").files_reviewed(), None);
}
