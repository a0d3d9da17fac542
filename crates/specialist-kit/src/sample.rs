//! A fixed sample request for prompt snapshots and plugin tests.
//!
//! Every built-in specialist snapshots its prompt for [`prompt_request`], so a change
//! to a shared block shows up in every snapshot at once. Custom plugin authors can use
//! it the same way. The data is invented: a five-file change (a modification, a
//! rename with edits, a deletion, an addition and a changelog entry), a pull-request
//! intent, one truncated policy document and two candidates. Sample replies
//! ([`empty_candidate_reply`], [`one_candidate_reply`], [`decision_reply`]) fit the
//! standard contracts for the same request.

use serde_json::{Value, json};

use vouch_abi::{Area, ContractRequest};
use vouch_abi::{
    CandidateForVerification, ChangeSummary, DismissedConcern, DismissedForVerification,
    FileSummary, HunkSummary, Intent, PAYLOAD_VERSION, PolicyDocument, PromptRequest,
    ProposedCandidate,
};

fn hunk(old_start: u32, old_lines: u32, new_start: u32, new_lines: u32) -> HunkSummary {
    HunkSummary {
        old_start,
        old_lines,
        new_start,
        new_lines,
    }
}

fn file(path: &str, status: &str, counts: (u32, u32), hunks: Vec<HunkSummary>) -> FileSummary {
    FileSummary {
        path: path.into(),
        previous_path: None,
        status: status.into(),
        kind: "file".into(),
        binary: false,
        additions: counts.0,
        deletions: counts.1,
        hunks,
    }
}

/// The sample change: base `1f3c…`, head `9a7e…`, five files sorted by path.
pub fn change() -> ChangeSummary {
    let mut renamed = file(
        "src/auth/tokens.rs",
        "renamed",
        (18, 6),
        vec![hunk(12, 8, 12, 14), hunk(55, 4, 61, 10)],
    );
    renamed.previous_path = Some("src/auth/token.rs".into());
    ChangeSummary {
        base_sha: "1f3c5e7a9b0d2f4a6c8e0b1d3f5a7c9e1b3d5f70".into(),
        head_sha: "9a7e5c3b1d0f2e4a6c8b0d2f4e6a8c0b2d4f6e81".into(),
        files: vec![
            file("CHANGELOG.md", "modified", (2, 0), vec![hunk(3, 0, 4, 2)]),
            file(
                "src/auth/legacy_check.rs",
                "deleted",
                (0, 41),
                vec![hunk(1, 41, 0, 0)],
            ),
            renamed,
            file(
                "src/session/refresh.rs",
                "modified",
                (9, 4),
                vec![hunk(30, 10, 30, 15)],
            ),
            file(
                "tests/refresh_expiry.rs",
                "added",
                (36, 0),
                vec![hunk(0, 0, 1, 36)],
            ),
        ],
    }
}

/// The sample pull-request intent. Its title and body must never reach a role that
/// does not receive intent (tests search prompts for them).
pub fn intent() -> Intent {
    Intent {
        source: "pull-request".into(),
        title: "Reject expired API tokens during session refresh".into(),
        body: "Session refresh accepted tokens past their expiry whenever a clock-skew \
               allowance was configured. Token validation now lives in \
               `auth::tokens::validate` and the refresh handler calls it. The unused \
               `legacy_check` helper is removed."
            .into(),
    }
}

/// The sample policy evidence: one `CONTRIBUTING.md`, cut by the host's size cap.
pub fn policy_evidence() -> Vec<PolicyDocument> {
    vec![PolicyDocument {
        path: "CONTRIBUTING.md".into(),
        text: "# Contributing\n\n## Errors\nLibrary code returns typed errors (`AuthError`); \
               never call `unwrap()` outside tests.\n\n## Tests\nEvery behaviour change \
               adds a test under `tests/`.\n"
            .into(),
        truncated: true,
    }]
}

/// One dismissed concern, as the verifier receives it.
pub fn dismissed_concerns() -> Vec<DismissedForVerification> {
    vec![DismissedForVerification {
        dismissed_by: "generic-investigator #1".into(),
        concern: DismissedConcern {
            path: "src/auth/tokens.rs".into(),
            start_line: 61,
            end_line: 66,
            concern: "the renamed token check might accept an expired token".into(),
            evidence: "expiry is checked first at src/auth/tokens.rs:62".into(),
        },
    }]
}

/// The two sample candidates (a correctness claim and a convention claim).
pub fn candidates() -> Vec<CandidateForVerification> {
    vec![
        CandidateForVerification {
            id: "generic-investigator #1/0".into(),
            candidate: ProposedCandidate {
                path: "src/session/refresh.rs".into(),
                start_line: 38,
                end_line: 41,
                revision: "head".into(),
                severity: "high".into(),
                area: Area::Correctness.as_str().into(),
                claim: "Refresh still accepts a token whose expiry equals the current time \
                        because `validate` compares with `<=`."
                    .into(),
                evidence: "src/session/refresh.rs:39 calls `validate(&token, now)`; \
                           src/auth/tokens.rs:66 returns Ok when `expires_at <= now + skew`."
                    .into(),
            },
        },
        CandidateForVerification {
            id: "conventions #1/0".into(),
            candidate: ProposedCandidate {
                path: "src/auth/tokens.rs".into(),
                start_line: 70,
                end_line: 70,
                revision: "head".into(),
                severity: "low".into(),
                area: Area::Conventions.as_str().into(),
                claim: "`validate` calls `unwrap()` on the parsed expiry in library code, \
                        which CONTRIBUTING.md forbids."
                    .into(),
                evidence: "CONTRIBUTING.md: \"never call `unwrap()` outside tests\"; \
                           src/auth/tokens.rs:70 `.parse::<i64>().unwrap()`."
                    .into(),
            },
        },
    ]
}

/// The full sample request: label `sample #1`, tools available, with intent, policy
/// evidence and candidates all present (each role renders only what it receives; tests
/// set `label` and `tools_available` as needed).
pub fn prompt_request() -> PromptRequest {
    PromptRequest {
        payload_version: PAYLOAD_VERSION,
        label: "sample #1".into(),
        change: change(),
        intent: Some(intent()),
        policy_evidence: policy_evidence(),
        candidates: candidates(),
        dismissed_concerns: dismissed_concerns(),
        tools_available: true,
    }
}

/// The contract request matching [`prompt_request`]: its current paths as expected
/// files (already sorted and unique) and its candidate ids.
pub fn contract_request() -> ContractRequest {
    let request = prompt_request();
    ContractRequest {
        expected_files: request
            .change
            .files
            .iter()
            .map(|f| f.path.clone())
            .collect(),
        candidate_ids: request.candidates.iter().map(|c| c.id.clone()).collect(),
        repair: false,
        max_candidates: None,
        max_dismissed: None,
        receipt_bound: None,
    }
}

/// A candidate reply to [`contract_request`] with no candidates and complete coverage of
/// every expected file (`{candidates: [], coverage, summary}`).
pub fn empty_candidate_reply() -> Value {
    json!({"candidates": [], "coverage": {"complete": true,
        "reviewedFiles": contract_request().expected_files}, "summary": "nothing found"})
}

/// A candidate reply with one low-severity candidate in `area` at
/// `src/auth/tokens.rs:70` (head), covering that file only. `area` is passed through as
/// given, so tests can probe normalisation and single-area checks.
pub fn one_candidate_reply(area: &str) -> Value {
    json!({"candidates": [{"path": "src/auth/tokens.rs", "startLine": 70, "endLine": 70,
        "revision": "head", "severity": "low", "area": area, "claim": "c", "evidence": "e"}],
        "coverage": {"complete": true, "reviewedFiles": ["src/auth/tokens.rs"]}, "summary": ""})
}

/// A verifier reply to [`contract_request`]: one decision rejecting the convention
/// candidate (`conventions #1/0`) with one head citation, and no finding.
pub fn decision_reply() -> Value {
    json!({"decisions": [{"candidateId": "conventions #1/0", "decision": "rejected",
        "evidence": "no unwrap at src/auth/tokens.rs:70", "citations": [{"revision": "head",
        "path": "src/auth/tokens.rs", "startLine": 68, "endLine": 72}], "finding": null}]})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{parse_candidate_reply, parse_verifier_reply};
    use vouch_abi::ParsedReply;

    #[test]
    fn sample_has_a_rename_a_deletion_and_sorted_unique_paths() {
        let change = change();
        assert!(
            change
                .files
                .iter()
                .any(|f| f.status == "renamed" && f.previous_path.is_some())
        );
        assert!(change.files.iter().any(|f| f.status == "deleted"));
        let paths = contract_request().expected_files;
        let mut sorted = paths.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(paths, sorted);
    }

    #[test]
    fn sample_counts_match_their_hunks() {
        for f in change().files {
            let old: u32 = f.hunks.iter().map(|h| h.old_lines).sum();
            let new: u32 = f.hunks.iter().map(|h| h.new_lines).sum();
            // Context lines appear on both sides, so the net change must agree.
            assert_eq!(
                i64::from(new) - i64::from(old),
                i64::from(f.additions) - i64::from(f.deletions),
                "{}",
                f.path
            );
        }
    }

    #[test]
    fn sample_replies_fit_the_standard_parsers() {
        let empty = parse_candidate_reply(&empty_candidate_reply()).expect("empty reply parses");
        let ParsedReply::Candidates(empty) = empty else {
            panic!("a candidate reply was expected");
        };
        assert!(empty.candidates.is_empty());
        assert_eq!(
            empty.coverage.reviewed_files,
            contract_request().expected_files
        );
        let one = parse_candidate_reply(&one_candidate_reply("Security")).expect("parses");
        let ParsedReply::Candidates(one) = one else {
            panic!("a candidate reply was expected");
        };
        assert_eq!(one.candidates[0].area, "security");
        let decided = parse_verifier_reply(&decision_reply()).expect("decision reply parses");
        let ParsedReply::Decisions(decided) = decided else {
            panic!("a verifier reply was expected");
        };
        let ids = contract_request().candidate_ids;
        assert!(
            decided
                .decisions
                .iter()
                .all(|d| ids.contains(&d.candidate_id))
        );
    }
}
