//! Rule 13: an inventory claimed complete needs a recorded proof of the last page.

use serde_json::Value;

use super::Ctx;
use crate::evidence::payloads;
use crate::model::PaginationProof;
use crate::narrative::{ClaimKind, words};
use crate::transcript::TranscriptEntry;
use crate::violation::{Violation, ViolationCode};

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
    let narrative = ctx.narrative.claim(ClaimKind::InventoryComplete);
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
    out.extend(proof_violations(ctx, &source));
    out.extend(proof_entry(ctx));
    out
}

/// Rule 13's proof of a claimed-complete inventory: a pagination proof, evidence that
/// is more than a count below the page size, and no unproven status beside it.
fn proof_violations(ctx: &Ctx, source: &str) -> Vec<Violation> {
    let code = ViolationCode::InventoryCompletenessUnproven;
    let mut out = Vec::new();
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
/// or a total no larger than the items fetched up to this page. The response is read
/// with the envelopes it may come in ([`payloads`]: MCP `structuredContent` and
/// `content[].text`, a REST `body`, GraphQL `data` down to the connection whose
/// `pageInfo` says `hasNextPage`), the nearest that says anything.
pub(super) fn proves_last_page(arguments: &Value, result: &Value) -> Result<(), String> {
    payloads(result)
        .iter()
        .find_map(|payload| page_signal(arguments, payload))
        .unwrap_or_else(|| {
            Err("it has no has-next flag, next link, Link header or total".to_owned())
        })
}

/// The objects of one payload that carry paging metadata: the payload and its
/// metadata members.
fn paging_scopes(payload: &Value) -> Vec<&Value> {
    let members = [
        "metadata",
        "meta",
        "pagination",
        "pageInfo",
        "page_info",
        "headers",
        "paging",
    ];
    std::iter::once(payload)
        .chain(members.iter().filter_map(|k| payload.get(*k)))
        .collect()
}

/// What one payload says about the next page, if anything.
fn page_signal(arguments: &Value, payload: &Value) -> Option<Result<(), String>> {
    let mut total: Option<u64> = None;
    let entries = paging_scopes(payload)
        .into_iter()
        .filter_map(Value::as_object)
        .flatten();
    for (k, v) in entries {
        match norm_key(k).as_str() {
            "hasnextpage" | "hasmore" | "hasnext" | "morepages" => match v.as_bool() {
                Some(false) => return Some(Ok(())),
                Some(true) => return Some(Err(format!("`{k}` is true: there is a next page"))),
                None => {}
            },
            "next" | "nextpage" | "nextlink" | "nexturl" | "nextcursor" | "nextpagetoken"
            | "nextpageurl" => {
                let last = v.is_null() || v.as_str().is_some_and(str::is_empty);
                return Some(if last {
                    Ok(())
                } else {
                    Err(format!("`{k}` names a next page"))
                });
            }
            "link" => {
                if let Some(link) = v.as_str() {
                    let next = link
                        .to_lowercase()
                        .replace(' ', "")
                        .contains("rel=\"next\"");
                    return Some(if next {
                        Err("the Link header has rel=\"next\"".to_owned())
                    } else {
                        Ok(())
                    });
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
    total.map(|total| total_covers(arguments, payload, total))
}

/// Whether a total is no larger than the items fetched up to this page
/// (`(page-1)·limit + items`).
fn total_covers(arguments: &Value, payload: &Value, total: u64) -> Result<(), String> {
    let items = [
        payload.get("items"),
        payload.get("data"),
        payload.get("body"),
        payload.get("results"),
        payload.get("values"),
        payload.get("nodes"),
        Some(payload),
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
