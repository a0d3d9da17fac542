//! Rules about claims and their proof: reviewed head (4), merge (5), issue closure
//! (6), full suite (7), inventory completeness (13), pre-existing failures (14).

use super::{Ctx, recorded};
use crate::classify;
use crate::model::{
    DiffReviewStatus, Disposition, IgnoredTests, LinkedIssue, MergeResult, PaginationProof,
    TestCounts, ValidationStatus,
};
use crate::narrative::{Claim, words};
use crate::session::head_matches;
use crate::transcript::TranscriptEntry;
use crate::violation::{Violation, ViolationCode};

/// Rule 4. "A reviewed head SHA is rejected unless validation passed, diff review
/// passed, and the validation worktree HEAD exactly equals the candidate head."
///
/// The validation must also be the official run on the unmodified PR head, and the
/// reviewed head must itself be the candidate head.
pub(super) fn reviewed_head_proven(ctx: &Ctx) -> Vec<Violation> {
    let mut out = transcript_head(ctx);
    let Some(reviewed) = ctx.text("/reviewedHeadSha") else {
        return out;
    };
    let code = ViolationCode::ReviewedHeadUnproven;
    let candidate = ctx.text("/target/candidateHeadSha");
    if candidate != Some(reviewed) {
        out.push(Violation::new(
            code,
            "/reviewedHeadSha",
            format!(
                "reviewedHeadSha `{reviewed}` is not the candidate head `{}`",
                candidate.unwrap_or("(missing)")
            ),
        ));
    }
    if ctx.get::<ValidationStatus>("/validation/status") != Some(ValidationStatus::Passed) {
        out.push(Violation::new(
            code,
            "/validation/status",
            "a reviewed head is claimed but validation did not pass",
        ));
    }
    if !ctx.flag("/validation/official") || !ctx.flag("/validation/ranOnUnmodifiedPrHead") {
        out.push(Violation::new(
            code,
            "/validation/ranOnUnmodifiedPrHead",
            "a reviewed head is claimed but the passing validation is not the official run on the unmodified PR head",
        ));
    }
    if ctx.get::<DiffReviewStatus>("/diffReview/status") != Some(DiffReviewStatus::Passed) {
        out.push(Violation::new(
            code,
            "/diffReview/status",
            "a reviewed head is claimed but the diff review did not pass",
        ));
    }
    let head = ctx.text("/validation/worktreeHead");
    let already = out.iter().any(|v| v.pointer == "/validation/worktreeHead");
    if !already && (head.is_none() || head != candidate) {
        out.push(Violation::new(
            code,
            "/validation/worktreeHead",
            format!(
                "a reviewed head is claimed but the validation worktree HEAD `{}` is not exactly the candidate head `{}`",
                head.unwrap_or("(missing)"),
                candidate.unwrap_or("(missing)")
            ),
        ));
    }
    out
}

/// Rule 4 with a transcript: the reviewed head is the HEAD of the directory the
/// official validation ran in, at the time it ran. A HEAD the transcript shows (checked
/// out, or read with `git rev-parse HEAD` and its recorded output) that differs from
/// `validation.worktreeHead` is a violation.
fn transcript_head(ctx: &Ctx) -> Vec<Violation> {
    let (Some(model), Some(claimed)) = (&ctx.model, ctx.text("/validation/worktreeHead")) else {
        return Vec::new();
    };
    let official = ctx.official_seqs();
    model
        .tests
        .iter()
        .filter(|r| official.contains(&r.seq))
        .find_map(|r| {
            let head = r.head.as_deref()?;
            let other = head_matches(head, claimed) == Some(false)
                || names_another_commit(head, ctx.text("/target/targetBranch/name"));
            other.then(|| {
                Violation::new(
                    ViolationCode::ReviewedHeadUnproven,
                    "/validation/worktreeHead",
                    format!(
                        "validation.worktreeHead is `{claimed}` but the transcript shows HEAD `{head}` in {} when official validation `{}` ran (seq {})",
                        r.dir.as_deref().unwrap_or("its directory"),
                        r.command,
                        r.seq
                    ),
                )
            })
        })
        .into_iter()
        .collect()
}

/// Whether a HEAD the model holds as a ref name is certainly not the candidate: the
/// target branch (`main`, `origin/main`, `refs/heads/main`, `refs/remotes/origin/main`)
/// or a ref relative to another commit (`HEAD~1`, `HEAD^`, `@{-1}`, `ORIG_HEAD`).
/// Other names (`FETCH_HEAD` after fetching the PR, `gh pr checkout 42`) stay unknown.
fn names_another_commit(head: &str, target_branch: Option<&str>) -> bool {
    let relative =
        head.contains('~') || head.contains('^') || head.contains("@{") || head == "ORIG_HEAD";
    let branch = target_branch.is_some_and(|name| {
        let short = head
            .trim_start_matches("refs/")
            .trim_start_matches("heads/")
            .trim_start_matches("remotes/");
        short == name || short.split_once('/').is_some_and(|(_, b)| b == name)
    });
    relative || branch
}

/// Rule 5. "\"Merged\" rejected without a merge result and target-ancestry proof."
///
/// A merge is claimed by `merge.result: merged`, `handoff.disposition: merged` or the
/// narrative; each needs `merge.result: merged`, `merge.mergeCommitSha` and
/// `merge.targetAncestryProof`.
pub(super) fn merge_proven(ctx: &Ctx) -> Vec<Violation> {
    let result: Option<MergeResult> = ctx.get("/merge/result");
    let narrative = ctx.narrative.claim(Claim::Merged);
    let claimed = result == Some(MergeResult::Merged)
        || ctx.disposition() == Some(Disposition::Merged)
        || narrative.is_some();
    if !claimed {
        return Vec::new();
    }
    let code = ViolationCode::MergeUnproven;
    let source = match narrative {
        Some(hit) if result != Some(MergeResult::Merged) => {
            format!("the narrative says \"{}\"", hit.sentence)
        }
        _ => "the report claims a merge".to_owned(),
    };
    if ctx.not_applicable("/merge") {
        return vec![Violation::new(
            code,
            "/merge",
            format!("{source} but the merge record is not applicable"),
        )];
    }
    let mut out = Vec::new();
    if result != Some(MergeResult::Merged) {
        out.push(Violation::new(
            code,
            "/merge/result",
            format!("{source} but merge.result is not `merged`"),
        ));
    }
    if ctx.text("/merge/mergeCommitSha").is_none() {
        out.push(Violation::new(
            code,
            "/merge/mergeCommitSha",
            format!("{source} but no merge commit SHA is recorded"),
        ));
    }
    match ctx.text("/merge/targetAncestryProof") {
        None => out.push(Violation::new(
            code,
            "/merge/targetAncestryProof",
            format!("{source} but there is no proof the merge commit is on the target branch"),
        )),
        Some(proof) => out.extend(recorded::cited_lines_support(
            ctx,
            "/merge/targetAncestryProof",
            "the target-ancestry proof",
            proof,
        )),
    }
    if result == Some(MergeResult::Merged) {
        out.extend(recorded::merge_call_succeeded(ctx));
    }
    out
}

/// Rule 6. "\"Issue closed\" rejected without live linked-issue verification after the
/// merge."
pub(super) fn issue_closure_verified(ctx: &Ctx) -> Vec<Violation> {
    let code = ViolationCode::IssueClosureUnverified;
    let issues: Vec<(usize, LinkedIssue)> = ctx
        .report
        .pointer("/linkedIssues")
        .and_then(serde_json::Value::as_array)
        .map(|items| {
            items
                .iter()
                .enumerate()
                .filter_map(|(i, v)| serde_json::from_value(v.clone()).ok().map(|x| (i, x)))
                .collect()
        })
        .unwrap_or_default();
    let mut out = Vec::new();
    for (i, issue) in issues.iter().filter(|(_, x)| x.closed) {
        let unverified = !issue.live_verified_after_merge
            || issue
                .evidence
                .as_deref()
                .is_none_or(|e| e.trim().is_empty());
        if unverified {
            out.push(Violation::new(
                code,
                format!("/linkedIssues/{i}"),
                format!(
                    "issue {} is marked closed without a live read of its state after the merge (liveVerifiedAfterMerge and evidence)",
                    issue.reference
                ),
            ));
        } else if let Some(problem) = closure_order(ctx, issue) {
            out.push(Violation::new(code, format!("/linkedIssues/{i}"), problem));
        }
    }
    if let Some(hit) = ctx.narrative.claim(Claim::IssueClosed) {
        let proven = issues
            .iter()
            .any(|(_, x)| x.closed && x.live_verified_after_merge && x.evidence.is_some());
        if !proven {
            out.push(Violation::new(
                code,
                "/linkedIssues",
                format!("the narrative says \"{}\" but no linked issue is recorded closed and live-verified after the merge", hit.sentence),
            ));
        }
    }
    out
}

/// The transcript seqs a text names (`seq 17`, `seq 15-16`, `seqs 3, 4`).
pub(super) fn cited_seqs(text: &str) -> Vec<u64> {
    let tokens: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t.eq_ignore_ascii_case("seq") || t.eq_ignore_ascii_case("seqs") {
            out.extend(tokens.get(i + 1).and_then(|n| n.parse::<u64>().ok()));
        }
    }
    out
}

/// Whether a transcript entry reads an issue (a read tool or command naming issues).
fn reads_issue(entry: &TranscriptEntry) -> bool {
    match entry {
        TranscriptEntry::Tool {
            name, arguments, ..
        } => {
            name.to_lowercase().contains("issue")
                && classify::classify_tool(name, arguments).is_none()
        }
        TranscriptEntry::Command { command, .. } => {
            command.to_lowercase().contains("issue")
                && classify::classify_command(command)
                    .iter()
                    .all(|k| k.categories().is_empty())
        }
        _ => false,
    }
}

/// The first forge merge of the transcript (tool call or command).
fn merge_seq(ctx: &Ctx) -> Option<u64> {
    recorded::merge_calls(ctx).first().copied()
}

/// Rule 6 with a transcript: the live read of a closed issue is a transcript entry
/// (`verifiedAtSeq`, or a `seq N` in the evidence) that reads the issue, after the
/// merge in `seq` order.
fn closure_order(ctx: &Ctx, issue: &LinkedIssue) -> Option<String> {
    let transcript = ctx.transcript?;
    let cited: Vec<u64> = issue
        .verified_at_seq
        .into_iter()
        .chain(cited_seqs(issue.evidence.as_deref().unwrap_or_default()))
        .collect();
    let reference = &issue.reference;
    let Some(&seq) = cited.first() else {
        return Some(format!(
            "issue {reference} is marked closed but its evidence names no transcript seq of the live read (verifiedAtSeq)"
        ));
    };
    let Some(entry) = transcript.iter().find(|e| e.seq() == seq) else {
        return Some(format!(
            "issue {reference}: the live read is cited at seq {seq}, which is not in the transcript"
        ));
    };
    let call = ctx.cited(seq).map_or(entry, |c| c.call);
    if !reads_issue(call) {
        return Some(format!(
            "issue {reference}: transcript seq {seq} is not a read of the issue"
        ));
    }
    if let Some(problem) = recorded::issue_read_contradicts(ctx, reference, seq) {
        return Some(problem);
    }
    match merge_seq(ctx) {
        Some(merge) if seq < merge => Some(format!(
            "issue {reference}: the live read at seq {seq} comes before the merge at seq {merge}; the closure must be read after the merge"
        )),
        _ => None,
    }
}

/// Rule 7. "\"Full suite passed\" rejected when tests were ignored or skipped, unless
/// the report says exactly what was ignored."
///
/// A pass claim is `validation.status: passed`, `validation.fullSuitePassed`, or a pass
/// phrase ("all tests passed", "all checks succeeded", "green", ...) in the narrative
/// or any handoff text. Every pass claim needs counts with at least one executed test,
/// no failures, and `validation.ignored` counts adding up to `skipped + ignored`; a
/// claim in words also needs `status: passed`. With a transcript, the counts and exit
/// codes the official validation commands recorded must agree.
pub(super) fn full_suite_claim_proven(ctx: &Ctx) -> Vec<Violation> {
    let handoff_claim = handoff_pass_claim(ctx);
    let narrative = ctx.narrative.claim(Claim::FullSuitePassed);
    let status = ctx.get::<ValidationStatus>("/validation/status");
    let worded =
        ctx.flag("/validation/fullSuitePassed") || narrative.is_some() || handoff_claim.is_some();
    if !worded && status != Some(ValidationStatus::Passed) {
        return Vec::new();
    }
    let code = ViolationCode::FullSuiteClaimUnproven;
    let source = narrative
        .map(|h| format!("the narrative says \"{}\"", h.sentence))
        .or(handoff_claim)
        .unwrap_or_else(|| {
            if ctx.flag("/validation/fullSuitePassed") {
                "validation.fullSuitePassed is true".to_owned()
            } else {
                "validation.status is `passed`".to_owned()
            }
        });
    let mut out = Vec::new();
    if worded && status != Some(ValidationStatus::Passed) {
        out.push(Violation::new(
            code,
            "/validation/status",
            format!("{source} but validation did not pass"),
        ));
    }
    let Some(counts) = ctx.get::<TestCounts>("/validation/counts") else {
        if worded {
            out.push(Violation::new(
                code,
                "/validation/counts",
                format!("{source} but no test counts are recorded"),
            ));
        }
        return out;
    };
    if counts.passed == 0 {
        out.push(Violation::new(
            code,
            "/validation/counts/passed",
            format!("{source} but no test executed and passed (counts: passed 0, failed {}, skipped {}, ignored {})", counts.failed, counts.skipped, counts.ignored),
        ));
    }
    if counts.failed > 0 {
        out.push(Violation::new(
            code,
            "/validation/counts/failed",
            format!("{source} but {} tests failed", counts.failed),
        ));
    }
    let not_run = counts.skipped + counts.ignored;
    if not_run > 0 {
        let listed: Vec<IgnoredTests> = ctx.get("/validation/ignored").unwrap_or_default();
        let listed_count: u64 = listed.iter().map(|x| x.count).sum();
        if listed_count != not_run {
            out.push(Violation::new(
                code,
                "/validation/ignored",
                format!(
                    "{source} but {} skipped and {} ignored tests are not all named: validation.ignored accounts for {listed_count} of {not_run}",
                    counts.skipped, counts.ignored
                ),
            ));
        }
    }
    out.extend(transcript_counts(ctx, &counts, &source));
    out.extend(recorded::official_lines(ctx, &source, worded));
    out
}

/// The first pass claim in the handoff's text (any string in it), as a message source.
fn handoff_pass_claim(ctx: &Ctx) -> Option<String> {
    let handoff = ctx.report.get("handoff")?;
    let mut found = None;
    walk_strings(handoff, "/handoff", &mut |pointer, text| {
        if found.is_none()
            && let Some(hit) =
                crate::narrative::Narrative::parse(text).claim(Claim::FullSuitePassed)
        {
            found = Some(format!("{pointer} says \"{}\"", hit.sentence));
        }
    });
    found
}

/// Visit every string in a JSON value with its pointer.
pub(super) fn walk_strings(
    value: &serde_json::Value,
    pointer: &str,
    visit: &mut dyn FnMut(&str, &str),
) {
    match value {
        serde_json::Value::String(s) => visit(pointer, s),
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk_strings(v, &format!("{pointer}/{i}"), visit);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                walk_strings(
                    v,
                    &format!("{pointer}/{}", crate::violation::escape_token(k)),
                    visit,
                );
            }
        }
        _ => {}
    }
}

/// With a transcript: the official validation commands' recorded counts (summed) must
/// equal `validation.counts`, and none may have exited non-zero.
fn transcript_counts(ctx: &Ctx, counts: &TestCounts, source: &str) -> Vec<Violation> {
    let Some(model) = &ctx.model else {
        return Vec::new();
    };
    let official = ctx.official_seqs();
    let runs: Vec<_> = model
        .tests
        .iter()
        .filter(|r| official.contains(&r.seq))
        .collect();
    let mut out = Vec::new();
    if let Some(failed) = runs.iter().find(|r| r.exit_code.is_some_and(|c| c != 0)) {
        out.push(Violation::new(
            ViolationCode::FullSuiteClaimUnproven,
            "/validation/status",
            format!(
                "{source} but official validation `{}` exited {} (transcript seq {})",
                failed.command,
                failed.exit_code.unwrap_or_default(),
                failed.seq
            ),
        ));
    }
    let recorded: Vec<TestCounts> = runs.iter().filter_map(|r| r.counts).collect();
    if recorded.is_empty() {
        return out;
    }
    let sum = recorded.iter().fold(
        TestCounts {
            passed: 0,
            failed: 0,
            skipped: 0,
            ignored: 0,
        },
        |a, c| TestCounts {
            passed: a.passed + c.passed,
            failed: a.failed + c.failed,
            skipped: a.skipped + c.skipped,
            ignored: a.ignored + c.ignored,
        },
    );
    if sum != *counts {
        out.push(Violation::new(
            ViolationCode::FullSuiteClaimUnproven,
            "/validation/counts",
            format!(
                "validation.counts (passed {}, failed {}, skipped {}, ignored {}) differ from what the official validation output in the transcript shows (passed {}, failed {}, skipped {}, ignored {})",
                counts.passed, counts.failed, counts.skipped, counts.ignored, sum.passed, sum.failed, sum.skipped, sum.ignored
            ),
        ));
    }
    out
}

/// Phrases that treat "fewer results than the page size" as the proof.
const COUNT_BELOW_PAGE: &[&[&str]] = &[
    &["less", "than", "page", "size"],
    &["fewer", "than", "page", "size"],
    &["below", "page", "size"],
    &["smaller", "than", "page", "size"],
    &["under", "page", "size"],
    &["less", "than", "the", "page", "size"],
    &["fewer", "than", "the", "page", "size"],
    &["below", "the", "page", "size"],
    &["smaller", "than", "the", "page", "size"],
    &["under", "the", "page", "size"],
    &["less", "than", "limit"],
    &["fewer", "than", "limit"],
];

/// Whether evidence argues from a result count and a page size ("15 PRs came back with
/// limit=50", "12 < 50") without citing a next-page flag, link or total.
fn count_against_page_size(evidence: &str, tokens: &[String]) -> bool {
    let cites_proof = tokens.iter().any(|t| {
        matches!(
            t.as_str(),
            "next"
                | "link"
                | "total"
                | "has"
                | "hasmore"
                | "has_more"
                | "hasnextpage"
                | "totalcount"
                | "metadata"
        )
    });
    if cites_proof {
        return false;
    }
    let compares = evidence.chars().collect::<Vec<_>>().windows(3).any(|w| {
        (w[1] == '<' || w[1] == '≤')
            && (w[0].is_ascii_digit() || w[0] == ' ')
            && (w[2].is_ascii_digit() || w[2] == ' ' || w[2] == '=')
    });
    let page_size = tokens.iter().any(|t| {
        matches!(
            t.as_str(),
            "limit" | "per" | "perpage" | "pagesize" | "page_size" | "per_page"
        )
    }) || tokens.windows(2).any(|w| w[0] == "page" && w[1] == "size");
    compares || page_size || count_against_a_bound(tokens)
}

/// Number words a count may be written with.
const NUMBER_WORDS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve", "fifteen", "twenty", "thirty", "forty", "fifty", "hundred",
];

/// Whether evidence sets a count against a per-request bound in other words ("seven rows
/// came back while each request may return up to thirty"): two counts and a bound phrase.
fn count_against_a_bound(tokens: &[String]) -> bool {
    let counts = tokens
        .iter()
        .filter(|t| t.chars().all(|c| c.is_ascii_digit()) || NUMBER_WORDS.contains(&t.as_str()))
        .count();
    let bound = tokens.iter().any(|t| {
        matches!(
            t.as_str(),
            "max" | "maximum" | "cap" | "capped" | "ceiling" | "pagination" | "paginated"
        )
    }) || tokens.windows(2).any(|w| {
        matches!(
            (w[0].as_str(), w[1].as_str()),
            ("up", "to") | ("at", "most")
        )
    });
    counts >= 2 && bound
}

/// Rule 13. "\"Inventory complete\" is rejected without explicit final-page /
/// no-next-page / metadata proof; result count below page size is not proof. A report
/// that records its inventory as unproven (`INVENTORY_PAGINATION_UNPROVEN`) instead of
/// claiming completeness is accepted (the claim is downgraded, not hidden)."
pub(super) fn inventory_completeness_proven(ctx: &Ctx) -> Vec<Violation> {
    let code = ViolationCode::InventoryCompletenessUnproven;
    let narrative = ctx.narrative.claim(Claim::InventoryComplete);
    let complete = ctx.flag("/inventory/complete");
    if !complete && narrative.is_none() {
        return Vec::new();
    }
    let source = if complete {
        "inventory.complete is true".to_owned()
    } else {
        format!(
            "the narrative says \"{}\"",
            narrative.map(|h| h.sentence.as_str()).unwrap_or_default()
        )
    };
    if ctx.not_applicable("/inventory") {
        return vec![Violation::new(
            code,
            "/inventory",
            format!("{source} but the inventory is not applicable"),
        )];
    }
    let mut out = Vec::new();
    if !complete {
        out.push(Violation::new(
            code,
            "/inventory/complete",
            format!("{source} but the inventory records completeness as unproven; drop the claim or prove it"),
        ));
        return out;
    }
    let proof: Option<PaginationProof> = ctx.get("/inventory/paginationProof");
    if matches!(proof, None | Some(PaginationProof::None)) {
        out.push(Violation::new(
            code,
            "/inventory/paginationProof",
            format!("{source} without final-page, no-next-page or tool-metadata proof; record status INVENTORY_PAGINATION_UNPROVEN instead"),
        ));
    }
    match ctx.text("/inventory/evidence") {
        None => out.push(Violation::new(
            code,
            "/inventory/evidence",
            format!("{source} but the pagination evidence is empty"),
        )),
        Some(evidence) => {
            let tokens = words(evidence);
            let count_only = COUNT_BELOW_PAGE
                .iter()
                .any(|phrase| tokens.windows(phrase.len()).any(|w| w == *phrase))
                || count_against_page_size(evidence, &tokens);
            if count_only {
                out.push(Violation::new(
                    code,
                    "/inventory/evidence",
                    "a result count below the page size is not pagination proof; cite the final page, the absent next-page link, or tool metadata",
                ));
            }
        }
    }
    if ctx.text("/inventory/status").is_some() {
        out.push(Violation::new(
            code,
            "/inventory/status",
            "the inventory is claimed complete and unproven at once",
        ));
    }
    out.extend(proof_entry(ctx));
    out
}

/// Rule 13's structured proof: `inventory.proofSeq` names the transcript entry whose
/// recorded response proves the last page.
fn proof_entry(ctx: &Ctx) -> Option<Violation> {
    let code = ViolationCode::InventoryCompletenessUnproven;
    let pointer = "/inventory/proofSeq";
    let Some(seq) = ctx.get::<u64>(pointer) else {
        return Some(Violation::new(
            code,
            pointer,
            "the inventory is claimed complete but `proofSeq` does not name the transcript entry whose recorded response proves the last page",
        ));
    };
    let transcript = ctx.transcript?;
    let model = ctx.model.as_ref()?;
    let entry = transcript.iter().find(|e| e.seq() == seq);
    let (arguments, result) = match entry {
        Some(TranscriptEntry::Tool { arguments, .. }) => {
            (arguments.clone(), model.result(seq).cloned())
        }
        Some(TranscriptEntry::Command { .. }) => {
            (serde_json::Value::Null, model.result(seq).cloned())
        }
        Some(TranscriptEntry::Result { of, result, .. }) => {
            let args = transcript
                .iter()
                .find_map(|e| match e {
                    TranscriptEntry::Tool { seq, arguments, .. } if seq == of => {
                        Some(arguments.clone())
                    }
                    _ => None,
                })
                .unwrap_or(serde_json::Value::Null);
            (args, Some(result.clone()))
        }
        _ => {
            return Some(Violation::new(
                code,
                pointer,
                format!("proofSeq {seq} is not a tool call, command or result in the transcript"),
            ));
        }
    };
    let Some(result) = result else {
        return Some(Violation::new(
            code,
            pointer,
            format!(
                "transcript seq {seq} records no response, so it cannot prove the last page; record the response (or its pagination metadata) as its `result`"
            ),
        ));
    };
    proves_last_page(&arguments, &result)
        .err()
        .map(|why| Violation::new(code, pointer, format!("the response recorded at transcript seq {seq} does not prove the last page: {why}; a result count below the page size is not proof")))
}

fn norm_key(k: &str) -> String {
    k.chars()
        .filter(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase()
}

/// Whether a recorded listing response proves it is the last page: a false has-next
/// flag, a present-but-empty next link or cursor, a Link header without `rel="next"`,
/// or a total no larger than the items fetched up to this page.
pub(super) fn proves_last_page(
    arguments: &serde_json::Value,
    result: &serde_json::Value,
) -> Result<(), String> {
    use serde_json::Value;
    let mut scopes = vec![result];
    for key in [
        "metadata",
        "meta",
        "pagination",
        "pageInfo",
        "page_info",
        "headers",
        "paging",
    ] {
        if let Some(v) = result.get(key) {
            scopes.push(v);
        }
    }
    let mut total: Option<u64> = None;
    for scope in &scopes {
        let Some(map) = scope.as_object() else {
            continue;
        };
        for (k, v) in map {
            match norm_key(k).as_str() {
                "hasnextpage" | "hasmore" | "hasnext" | "morepages" => {
                    if v == &Value::Bool(false) {
                        return Ok(());
                    }
                    if v == &Value::Bool(true) {
                        return Err(format!("`{k}` is true: there is a next page"));
                    }
                }
                "next" | "nextpage" | "nextlink" | "nexturl" | "nextcursor" | "nextpagetoken"
                | "nextpageurl" => {
                    if v.is_null() || v.as_str().is_some_and(str::is_empty) {
                        return Ok(());
                    }
                    return Err(format!("`{k}` names a next page"));
                }
                "link" => {
                    if let Some(link) = v.as_str() {
                        if link
                            .to_lowercase()
                            .replace(' ', "")
                            .contains("rel=\"next\"")
                        {
                            return Err("the Link header has rel=\"next\"".to_owned());
                        }
                        return Ok(());
                    }
                }
                "total" | "totalcount" | "xtotalcount" | "totalitems" | "totalresults" => {
                    total = v
                        .as_u64()
                        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()));
                }
                _ => {}
            }
        }
    }
    let Some(total) = total else {
        return Err("it has no has-next flag, next link, Link header or total".to_owned());
    };
    let items = [
        result.get("items"),
        result.get("data"),
        result.get("body"),
        result.get("results"),
        result.get("values"),
        result.get("nodes"),
        Some(result),
    ]
    .into_iter()
    .flatten()
    .find_map(Value::as_array)
    .map(Vec::len)
    .unwrap_or(0) as u64;
    let arg = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| arguments.get(*n).and_then(Value::as_u64))
    };
    let page = arg(&["page"]).unwrap_or(1).max(1);
    let fetched = match arg(&["limit", "per_page", "perPage", "page_size", "pageSize"]) {
        Some(limit) => (page - 1) * limit + items,
        None if page == 1 => items,
        None => {
            return Err(format!(
                "a total of {total} cannot be compared with page {page} without its page size"
            ));
        }
    };
    if total <= fetched {
        Ok(())
    } else {
        Err(format!(
            "the total is {total} but only {fetched} items were fetched up to this page"
        ))
    }
}

/// Rule 14. "\"Failure is pre-existing / same as master\" is rejected when baseline and
/// PR test counts differ without an explanation."
///
/// The claim (`validation.failuresPreExisting` or the narrative) needs baseline counts;
/// counts that differ need `validation.baseline.explanation`.
pub(super) fn baseline_mismatch_explained(ctx: &Ctx) -> Vec<Violation> {
    let narrative = ctx.narrative.claim(Claim::FailurePreExisting);
    if !ctx.flag("/validation/failuresPreExisting") && narrative.is_none() {
        return Vec::new();
    }
    let code = ViolationCode::BaselineMismatchUnexplained;
    let source = narrative
        .map(|h| format!("the narrative says \"{}\"", h.sentence))
        .unwrap_or_else(|| "validation.failuresPreExisting is true".to_owned());
    let Some(baseline) = ctx.get::<TestCounts>("/validation/baseline/counts") else {
        return vec![Violation::new(
            code,
            "/validation/baseline",
            format!("{source} but no baseline counts are recorded"),
        )];
    };
    let Some(counts) = ctx.get::<TestCounts>("/validation/counts") else {
        return vec![Violation::new(
            code,
            "/validation/counts",
            format!("{source} but the PR run has no counts"),
        )];
    };
    if baseline != counts && ctx.text("/validation/baseline/explanation").is_none() {
        return vec![Violation::new(
            code,
            "/validation/baseline/explanation",
            format!(
                "{source} but baseline counts (passed {}, failed {}, skipped {}, ignored {}) differ from the PR run (passed {}, failed {}, skipped {}, ignored {}) and no explanation is given",
                baseline.passed,
                baseline.failed,
                baseline.skipped,
                baseline.ignored,
                counts.passed,
                counts.failed,
                counts.skipped,
                counts.ignored
            ),
        )];
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::names_another_commit;

    #[test]
    fn heads_that_are_certainly_not_the_candidate() {
        let table = [
            ("origin/main", true),
            ("main", true),
            ("refs/remotes/upstream/main", true),
            ("HEAD~1", true),
            ("@{-1}", true),
            ("ORIG_HEAD", true),
            ("FETCH_HEAD", false),
            ("gh pr checkout 42", false),
            ("origin/pr/42", false),
        ];
        for (head, other) in table {
            assert_eq!(names_another_commit(head, Some("main")), other, "{head}");
        }
    }
}
