//! The standard output contracts (bounded JSON Schemas) and their parsers.
//!
//! Every string has `maxLength` and every array `maxItems`, so a schema-constrained
//! decoder (`response_format: json_schema`) always terminates and a `max_tokens` that
//! covers the bound can be computed ([`token_bound`]). Objects list every property as
//! required and forbid others, as OpenAI's strict structured outputs demand; optional
//! values are nullable instead.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::{Value, json};

pub use vouch_abi::ContractRequest;
use vouch_abi::{CandidateReply, ParsedReply, ReceiptBound, VerifierReply};

/// Longest path accepted in a reply.
pub const MAX_PATH_CHARS: u64 = 240;
/// Longest one-sentence claim.
pub const MAX_CLAIM_CHARS: u64 = 300;
/// Longest evidence text.
pub const MAX_EVIDENCE_CHARS: u64 = 800;
/// Longest summary.
pub const MAX_SUMMARY_CHARS: u64 = 400;
pub use vouch_abi::MAX_CANDIDATES;
/// Most citations per decision.
pub const MAX_CITATIONS: u64 = 4;
pub use vouch_abi::MAX_DISMISSED_CONCERNS;
/// Longest dismissed concern.
pub const MAX_CONCERN_CHARS: u64 = 160;
/// Longest evidence that cleared a dismissed concern.
pub const MAX_CLEARED_BY_CHARS: u64 = 240;

/// Highest line number any contract accepts (`startLine`, `endLine` of candidates,
/// findings and citations). The schema states it as `maximum`, so schema-constrained
/// decoding cannot produce a line the parser then rejects; no reviewed file is longer.
pub const MAX_LINE: u64 = 1_000_000;

/// What the contract says of a receipt entry: the allowed paths are the expected list
/// of the prompt, never repeated inside the schema.
pub const RECEIPT_PATH_RULE: &str =
    "exactly one path of the expected changed files list, spelled as listed";

/// Severities, most severe first.
pub const SEVERITIES: [&str; 4] = ["critical", "high", "medium", "low"];

/// The review areas: defined once, at the plugin boundary ([`vouch_abi::Area`]).
pub use vouch_abi::Area;

fn line_number() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": MAX_LINE})
}

fn string(max: u64) -> Value {
    json!({"type": "string", "maxLength": max})
}

/// A JSON object of `entries`, in order, each value moved in: the `json!` macro copies an
/// interpolated `Value` through serialization, and a host asks for a contract per
/// execution.
fn ordered<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

fn object(properties: Value) -> Value {
    let required: Vec<Value> = properties
        .as_object()
        .map(|o| o.keys().map(|k| Value::String(k.clone())).collect())
        .unwrap_or_default();
    ordered([
        ("type", "object".into()),
        ("properties", properties),
        ("required", Value::Array(required)),
        ("additionalProperties", false.into()),
    ])
}

/// An array schema of at most `max` items.
fn array(items: Value, max: u64) -> Value {
    ordered([
        ("type", "array".into()),
        ("items", items),
        ("maxItems", max.into()),
    ])
}

/// The contract of every candidate-producing role: `{candidates, coverage, summary,
/// dismissedConcerns}`, the same for a repair.
pub fn candidate_contract(request: &ContractRequest) -> Value {
    // The same for every request: built once (a host asks for contracts per execution).
    static CANDIDATE: LazyLock<Value> = LazyLock::new(|| {
        object(json!({
            "path": string(MAX_PATH_CHARS),
            "startLine": line_number(),
            "endLine": line_number(),
            "revision": {"type": "string", "enum": ["head", "base"]},
            "severity": {"type": "string", "enum": SEVERITIES},
            "area": {"type": "string", "enum": Area::ALL.map(Area::as_str)},
            "claim": string(MAX_CLAIM_CHARS),
            "evidence": string(MAX_EVIDENCE_CHARS),
        }))
    });
    let candidate = CANDIDATE.clone();
    // Receipt entries must come from the expected list, which the prompt states once;
    // the schema repeats no path (a list of thousands of paths in the schema, sent in
    // the message and again as `response_format`, outgrows any context). Each entry is
    // bounded by the longest expected path, and the host compares the receipt exactly.
    // A shard asks with its lane's bound (`receipt_bound`), so a lane's shards share one
    // contract.
    let (file_item, max_files) = if request.expected_files.is_empty() {
        (string(MAX_PATH_CHARS), 1)
    } else {
        let own = ReceiptBound::of(&request.expected_files);
        let bound = request.receipt_bound.map_or(own, |lane| lane.max(own));
        let mut item = string(bound.longest_path_chars.max(1));
        item["description"] = json!(RECEIPT_PATH_RULE);
        (item, bound.files)
    };
    let coverage = object(ordered([
        ("complete", json!({"type": "boolean"})),
        ("reviewedFiles", array(file_item, max_files)),
    ]));
    let properties = ordered([
        ("candidates", array(candidate, request.candidate_cap())),
        ("coverage", coverage),
        ("summary", string(MAX_SUMMARY_CHARS)),
        (
            "dismissedConcerns",
            dismissed_concerns_schema(request.dismissed_cap()),
        ),
    ]);
    object(properties)
}

/// `dismissedConcerns`: at most `cap` concerns a stage checked and dismissed, each with
/// its location, the concern and the evidence that cleared it.
fn dismissed_concerns_schema(cap: u64) -> Value {
    static CONCERN: LazyLock<Value> = LazyLock::new(|| {
        object(json!({
            "path": string(MAX_PATH_CHARS),
            "startLine": line_number(),
            "endLine": line_number(),
            "concern": string(MAX_CONCERN_CHARS),
            "evidence": string(MAX_CLEARED_BY_CHARS),
        }))
    });
    array(CONCERN.clone(), cap)
}

/// The verifier's contract: `{decisions: [{candidateId, decision, evidence, citations, finding}]}`.
/// `candidateId` is restricted to the host-assigned ids when they are given.
pub fn verifier_contract(request: &ContractRequest) -> Value {
    let mut candidate_id = string(120);
    if !request.candidate_ids.is_empty() {
        candidate_id = json!({"type": "string", "enum": request.candidate_ids});
    }
    let citation = object(json!({
        "revision": {"type": "string", "enum": ["head", "base"]},
        "path": string(MAX_PATH_CHARS),
        "startLine": line_number(),
        "endLine": line_number(),
    }));
    let finding = object(json!({
        "path": string(MAX_PATH_CHARS),
        "startLine": line_number(),
        "endLine": line_number(),
        "severity": {"type": "string", "enum": SEVERITIES},
        "claim": string(MAX_CLAIM_CHARS),
    }));
    let mut finding_or_null = finding;
    finding_or_null["type"] = json!(["object", "null"]);
    let decision = object(json!({
        "candidateId": candidate_id,
        "decision": {"type": "string", "enum": ["verified", "rejected", "unresolved"]},
        "evidence": string(MAX_EVIDENCE_CHARS),
        "citations": {"type": "array", "items": citation, "maxItems": MAX_CITATIONS},
        "finding": finding_or_null,
    }));
    let max_decisions = (request.candidate_ids.len() as u64).max(1);
    object(json!({
        "decisions": {"type": "array", "items": decision, "maxItems": max_decisions},
    }))
}

/// An upper bound, in tokens, of a reply that satisfies `schema`: strings at their
/// `maxLength` (one token per character, the safe bound for any tokenizer, plus quotes),
/// arrays at `maxItems`, every object property present. Used to set `max_tokens` so a
/// schema-constrained decode is never cut short. Unbounded strings or arrays count as
/// 1,024 tokens.
pub fn token_bound(schema: &Value) -> u64 {
    match schema.get("type") {
        Some(Value::String(t)) => type_bound(t, schema),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .map(|t| type_bound(t, schema))
            .max()
            .unwrap_or(1),
        _ if schema.get("enum").is_some() => enum_bound(schema),
        _ => 1024,
    }
}

fn enum_bound(schema: &Value) -> u64 {
    schema["enum"]
        .as_array()
        .map(|v| {
            v.iter()
                .map(|e| e.to_string().len() as u64)
                .max()
                .unwrap_or(1)
        })
        .unwrap_or(1)
}

fn type_bound(t: &str, schema: &Value) -> u64 {
    match t {
        "string" if schema.get("enum").is_some() => enum_bound(schema),
        "string" => schema["maxLength"].as_u64().unwrap_or(1024) + 2,
        "integer" | "number" => 12,
        "boolean" | "null" => 5,
        "array" => {
            let items = schema.get("items").map(token_bound).unwrap_or(1024);
            2 + schema["maxItems"].as_u64().unwrap_or(16) * (items + 1)
        }
        "object" => {
            let props = schema["properties"].as_object();
            2 + props
                .map(|p| {
                    p.iter()
                        .map(|(k, v)| k.len() as u64 + 4 + token_bound(v))
                        .sum()
                })
                .unwrap_or(0)
        }
        _ => 1024,
    }
}

/// Parses a candidate-producing reply: the object must have `candidates` (array),
/// `coverage.complete` (bool) and `coverage.reviewedFiles` (array of strings).
/// Severity and area are lower-cased; unknown values are errors naming the field.
/// More candidates or dismissed concerns than the contract's caps are not an error:
/// each is checked like the others, and the host decides what goes on past its bounds
/// ([`MAX_CANDIDATES`], [`MAX_DISMISSED_CONCERNS`]), so a well-formed reply that raises
/// one concern too many is never refused for it.
///
/// # Errors
/// A message naming the first field that does not fit the contract.
pub fn parse_candidate_reply(value: &Value) -> Result<ParsedReply, String> {
    if !value.is_object() {
        return Err("the reply is not a JSON object".into());
    }
    for key in ["candidates", "coverage"] {
        if value.get(key).is_none() {
            return Err(format!("missing required field `{key}`"));
        }
    }
    let mut reply: CandidateReply = CandidateReply::deserialize(value)
        .map_err(|e| format!("reply does not fit the contract: {e}"))?;
    for (i, c) in reply.candidates.iter_mut().enumerate() {
        c.severity = c.severity.trim().to_lowercase();
        c.area = c.area.trim().to_lowercase();
        c.revision = c.revision.trim().to_lowercase();
        if !SEVERITIES.contains(&c.severity.as_str()) {
            return Err(format!(
                "candidates[{i}].severity `{}` is not one of {SEVERITIES:?}",
                c.severity
            ));
        }
        if c.area.parse::<Area>().is_err() {
            return Err(format!(
                "candidates[{i}].area `{}` is not one of {:?}",
                c.area,
                Area::ALL.map(Area::as_str)
            ));
        }
        if c.revision != "head" && c.revision != "base" {
            return Err(format!(
                "candidates[{i}].revision `{}` is not head or base",
                c.revision
            ));
        }
        // An end before the start is the host's to set aside (`invalid-line-range` at
        // intake), so the other candidates of the reply are still verified.
        if c.path.is_empty() || c.start_line == 0 {
            return Err(format!(
                "candidates[{i}] has an empty path or a start line of 0"
            ));
        }
        if u64::from(c.end_line) > MAX_LINE {
            return Err(format!(
                "candidates[{i}].endLine {} is above the contract's maximum {MAX_LINE}",
                c.end_line
            ));
        }
        if c.claim.trim().is_empty() {
            return Err(format!("candidates[{i}].claim is empty"));
        }
    }
    check_dismissed(&reply)?;
    Ok(ParsedReply::Candidates(reply))
}

/// The contract's bounds on each of `dismissedConcerns` (their number is the host's to
/// bound): a path, a line range inside `1..=MAX_LINE`, a concern and the evidence that
/// cleared it, within their lengths.
fn check_dismissed(reply: &CandidateReply) -> Result<(), String> {
    let concerns = &reply.dismissed_concerns;
    for (i, c) in concerns.iter().enumerate() {
        if c.path.is_empty()
            || c.start_line == 0
            || c.end_line < c.start_line
            || u64::from(c.end_line) > MAX_LINE
        {
            return Err(format!(
                "dismissedConcerns[{i}] has an empty path or an invalid line range"
            ));
        }
        if c.concern.trim().is_empty() || c.evidence.trim().is_empty() {
            return Err(format!(
                "dismissedConcerns[{i}] needs both the concern and the evidence that cleared it"
            ));
        }
        if c.concern.chars().count() as u64 > MAX_CONCERN_CHARS
            || c.evidence.chars().count() as u64 > MAX_CLEARED_BY_CHARS
        {
            return Err(format!(
                "dismissedConcerns[{i}] is longer than the contract allows \
                 ({MAX_CONCERN_CHARS} characters of concern, {MAX_CLEARED_BY_CHARS} of evidence)"
            ));
        }
    }
    Ok(())
}

/// Parses a verifier reply: `decisions` (array) whose entries have `candidateId` and a
/// `decision` of `verified`, `rejected` or `unresolved` (lower-cased).
///
/// # Errors
/// A message naming the first field that does not fit the contract.
pub fn parse_verifier_reply(value: &Value) -> Result<ParsedReply, String> {
    if value.get("decisions").is_none() {
        return Err("missing required field `decisions`".into());
    }
    let mut reply: VerifierReply = VerifierReply::deserialize(value)
        .map_err(|e| format!("reply does not fit the contract: {e}"))?;
    for (i, d) in reply.decisions.iter_mut().enumerate() {
        d.decision = d.decision.trim().to_lowercase();
        if !["verified", "rejected", "unresolved"].contains(&d.decision.as_str()) {
            return Err(format!(
                "decisions[{i}].decision `{}` is not verified, rejected or unresolved",
                d.decision
            ));
        }
        for c in &mut d.citations {
            c.revision = c.revision.trim().to_lowercase();
        }
    }
    Ok(ParsedReply::Decisions(reply))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_string_and_array_is_bounded() {
        fn walk(v: &Value, at: &str) {
            match v.get("type") {
                Some(t)
                    if t == "string"
                        || t.as_array().is_some_and(|a| a.contains(&json!("string"))) =>
                {
                    assert!(
                        v.get("maxLength").is_some() || v.get("enum").is_some(),
                        "unbounded string at {at}"
                    );
                }
                Some(t) if t == "integer" => {
                    assert!(
                        v["minimum"].is_u64() && v["maximum"].is_u64(),
                        "unbounded integer at {at}"
                    );
                }
                Some(t) if t == "array" => {
                    assert!(v.get("maxItems").is_some(), "unbounded array at {at}");
                    walk(&v["items"], &format!("{at}/items"));
                }
                _ => {}
            }
            if let Some(p) = v.get("properties").and_then(Value::as_object) {
                assert_eq!(
                    v["additionalProperties"],
                    json!(false),
                    "open object at {at}"
                );
                assert_eq!(
                    v["required"].as_array().map(Vec::len),
                    Some(p.len()),
                    "optional property at {at}"
                );
                for (k, s) in p {
                    walk(s, &format!("{at}/{k}"));
                }
            }
        }
        let req = ContractRequest {
            expected_files: vec!["a".into()],
            candidate_ids: vec!["x #1/0".into()],
            repair: true,
            max_candidates: None,
            max_dismissed: None,
            receipt_bound: None,
        };
        walk(&candidate_contract(&req), "candidate");
        let many = ContractRequest {
            expected_files: (0..500)
                .map(|i| format!("src/dir/file_{i:04}.rs"))
                .collect(),
            ..req.clone()
        };
        let text = candidate_contract(&many).to_string();
        assert!(
            !text.contains("file_0001"),
            "the schema repeats no expected path"
        );
        assert_eq!(
            candidate_contract(&many)["properties"]["coverage"]["properties"]["reviewedFiles"]["items"]
                ["maxLength"],
            "src/dir/file_0000.rs".len()
        );
        walk(&verifier_contract(&req), "verifier");
        assert!(token_bound(&candidate_contract(&req)) > MAX_CANDIDATES * MAX_EVIDENCE_CHARS);
    }

    #[test]
    fn a_candidate_ending_before_it_starts_is_left_to_the_hosts_intake() {
        let reply = |start: u32, end: u32| {
            json!({"candidates": [{"path": "a.rs", "revision": "head", "startLine": start,
                "endLine": end, "severity": "high", "area": "correctness", "claim": "c",
                "evidence": "e"}], "coverage": {"complete": true, "reviewedFiles": ["a.rs"]},
                "summary": ""})
        };
        assert!(parse_candidate_reply(&reply(4, 3)).is_ok());
        let err = parse_candidate_reply(&reply(0, 3)).unwrap_err();
        assert!(err.contains("start line of 0"), "{err}");
    }

    #[test]
    fn dismissed_concerns_are_bounded_and_need_their_evidence() {
        let concern = |concern: &str, evidence: &str| json!({"path": "a.rs", "startLine": 2, "endLine": 3, "concern": concern, "evidence": evidence});
        let reply = |concerns: Value| {
            json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": ["a.rs"]},
                "summary": "", "dismissedConcerns": concerns})
        };
        let Ok(ParsedReply::Candidates(ok)) =
            parse_candidate_reply(&reply(Value::Array(vec![concern(
                "overflow?",
                "checked at a.rs:1",
            )])))
        else {
            panic!("a bounded concern parses")
        };
        assert_eq!(ok.dismissed_concerns[0].evidence, "checked at a.rs:1");
        // Absent is none (older replies and plugins stay valid).
        let none = json!({"candidates": [], "coverage": {"complete": true, "reviewedFiles": []}});
        assert!(parse_candidate_reply(&none).is_ok());
        // More concerns than the cap parse (the host bounds what goes on).
        assert!(parse_candidate_reply(&reply(Value::Array(vec![concern("x", "y"); 4]))).is_ok());
        let cases = [
            (json!([concern("x", " ")]), "needs both"),
            (
                json!([concern(&"c".repeat(161), "y")]),
                "longer than the contract allows",
            ),
            (
                json!([{"path": "a.rs", "startLine": 5, "endLine": 4, "concern": "x", "evidence": "y"}]),
                "invalid line range",
            ),
        ];
        for (concerns, want) in cases {
            let err = parse_candidate_reply(&reply(concerns.clone())).unwrap_err();
            assert!(err.contains(want), "{concerns}: {err}");
        }
        let capped = ContractRequest {
            max_dismissed: Some(1),
            ..ContractRequest::default()
        };
        assert_eq!(
            candidate_contract(&capped)["properties"]["dismissedConcerns"]["maxItems"],
            1
        );
        assert_eq!(
            candidate_contract(&ContractRequest::default())["properties"]["dismissedConcerns"]["maxItems"],
            MAX_DISMISSED_CONCERNS
        );
    }

    #[test]
    fn a_line_above_the_maximum_is_named() {
        let reply = json!({"candidates": [{"path": "a", "startLine": 1, "endLine": 20220101u32, "severity": "low",
            "area": "correctness", "claim": "c"}], "coverage": {"complete": true, "reviewedFiles": []}});
        let err = parse_candidate_reply(&reply).unwrap_err();
        assert!(err.contains("maximum 1000000"), "{err}");
    }

    #[test]
    fn a_lower_candidate_cap_lowers_the_token_bound() {
        let full = ContractRequest {
            expected_files: vec!["a".into()],
            ..ContractRequest::default()
        };
        let one = ContractRequest {
            max_candidates: Some(1),
            ..full.clone()
        };
        let zero = ContractRequest {
            max_candidates: Some(0),
            ..full.clone()
        };
        assert_eq!(
            candidate_contract(&full)["properties"]["candidates"]["maxItems"],
            MAX_CANDIDATES
        );
        assert_eq!(
            candidate_contract(&one)["properties"]["candidates"]["maxItems"],
            1
        );
        assert_eq!(
            candidate_contract(&zero)["properties"]["candidates"]["maxItems"],
            1,
            "never below one"
        );
        assert!(token_bound(&candidate_contract(&one)) < token_bound(&candidate_contract(&full)));
    }

    #[test]
    fn parsers_accept_contract_replies_and_name_bad_fields() {
        let ok = json!({"candidates": [{"path": "a.rs", "startLine": 1, "endLine": 2, "severity": "HIGH",
            "area": "correctness", "claim": "x", "evidence": ""}], "coverage": {"complete": true, "reviewedFiles": ["a.rs"]}});
        let ParsedReply::Candidates(r) = parse_candidate_reply(&ok).unwrap() else {
            panic!()
        };
        assert_eq!(r.candidates[0].severity, "high");
        assert_eq!(r.candidates[0].revision, "head");
        let cases = [
            (json!([]), "not a JSON object"),
            (json!({"coverage": {"complete": true}}), "`candidates`"),
            (json!({"candidates": []}), "`coverage`"),
            (
                json!({"candidates": [], "coverage": {"complete": "yes"}}),
                "contract",
            ),
            (
                json!({"candidates": [{"path": "a", "startLine": 0, "endLine": 2, "severity": "low", "area": "correctness", "claim": "c"}],
                "coverage": {"complete": true, "reviewedFiles": []}}),
                "start line of 0",
            ),
            (
                json!({"candidates": [{"path": "a", "startLine": 1, "endLine": 2, "severity": "meh", "area": "correctness", "claim": "c"}],
                "coverage": {"complete": true, "reviewedFiles": []}}),
                "severity",
            ),
        ];
        for (value, needle) in cases {
            let err = parse_candidate_reply(&value).unwrap_err();
            assert!(err.contains(needle), "{value} -> {err}");
        }
        assert!(
            parse_verifier_reply(
                &json!({"decisions": [{"candidateId": "a", "decision": "maybe"}]})
            )
            .is_err()
        );
        assert!(
            parse_verifier_reply(
                &json!({"decisions": [{"candidateId": "a", "decision": "Verified"}]})
            )
            .is_ok()
        );
    }

    /// A shard's receipt is bounded by its lane's bound or its own list, whichever is
    /// larger, so the shards of a lane that ask with one bound get one contract.
    #[test]
    fn a_receipt_is_bounded_by_the_larger_of_the_lane_bound_and_its_own_list() {
        let receipt = |files: &[&str], bound: Option<(u64, u64)>| {
            let request = ContractRequest {
                expected_files: files.iter().map(|f| f.to_string()).collect(),
                receipt_bound: bound.map(|(files, longest_path_chars)| ReceiptBound {
                    files,
                    longest_path_chars,
                }),
                ..ContractRequest::default()
            };
            let c = candidate_contract(&request);
            let list = &c["properties"]["coverage"]["properties"]["reviewedFiles"];
            (
                list["maxItems"].as_u64(),
                list["items"]["maxLength"].as_u64(),
            )
        };
        for (files, bound, expected) in [
            (&["a.rs", "bb.rs"][..], None, (2, 5)),
            (&["a.rs", "bb.rs"][..], Some((7, 30)), (7, 30)),
            (&["a.rs", "bb.rs"][..], Some((1, 1)), (2, 5)),
            (&["a.rs"][..], Some((3, 2)), (3, 4)),
        ] {
            assert_eq!(
                receipt(files, bound),
                (Some(expected.0), Some(expected.1)),
                "{files:?} {bound:?}"
            );
        }
        // Two shards of one lane, asking with the lane's bound, get the same contract.
        let lane = ReceiptBound::of(&["src/a.rs".into(), "src/longer/b.rs".into()]);
        let shard = |f: &str| {
            candidate_contract(&ContractRequest {
                expected_files: vec![f.into()],
                receipt_bound: Some(lane),
                ..ContractRequest::default()
            })
        };
        assert_eq!(shard("src/a.rs"), shard("src/longer/b.rs"));
    }
}
