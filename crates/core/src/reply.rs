//! Rules for one model reply of a stage execution: what a cut reply leads to, what a
//! repair may change, and when a repaired full-coverage claim stands.
//!
//! A repair fixes syntax only. These rules compare the repaired reply with the prior
//! (invalid) reply's text, so a repair can never be the place where a verdict flips, a
//! candidate appears or vanishes, or coverage is claimed without the model having said so.

use serde_json::Value;

use crate::coverage::{CoverageReceipt, ReceiptProblem, compare_coverage};
use crate::decision::Verdict;

/// What a stage execution does with a reply, by how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncationStep {
    /// The reply ended normally: extract and parse it (repair if invalid).
    Parse,
    /// The reply was cut at the output limit: ask once more, stating the cut and bound.
    ReAsk,
    /// The reply was cut again (or no budget is left): the stage fails, `truncated-output`.
    Fail,
}

/// Rule (truncation): a reply cut at the output limit (`finish_reason: length`) is never
/// parsed and never repaired. The first cut of a stage execution is re-asked once,
/// stating the cut and the bound, when the stage's budget has room for another request;
/// a second cut, or a cut with no budget left, fails the stage (`truncated-output`).
pub fn truncation_step(cut: bool, cuts_before: u32, budget_left: bool) -> TruncationStep {
    match (cut, cuts_before, budget_left) {
        (false, _, _) => TruncationStep::Parse,
        (true, 0, true) => TruncationStep::ReAsk,
        (true, _, _) => TruncationStep::Fail,
    }
}

/// Where a candidate lies: what identifies it across a repair.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CandidateLocation {
    /// Path as written.
    pub path: String,
    /// First line.
    pub start_line: u64,
    /// Last line.
    pub end_line: u64,
}

/// What a repair did that only a model's judgement may do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RepairViolation {
    /// The repair changed a verdict the prior reply stated.
    #[error(
        "the repair changed the decision for `{candidate_id}` from {} to {}",
        prior.as_str(),
        repaired.map_or("none", Verdict::as_str)
    )]
    VerdictChanged {
        /// The candidate.
        candidate_id: String,
        /// The verdict in the prior reply.
        prior: Verdict,
        /// The verdict in the repaired reply (`None`: the decision was dropped).
        repaired: Option<Verdict>,
    },
    /// The repair gave a verdict the prior reply does not state for the candidate in its
    /// own JSON.
    #[error(
        "the repair decided `{candidate_id}` as {} but the prior reply states no decision for it as JSON (`\"candidateId\"` and `\"decision\"` in one object); a repair cannot decide a verdict",
        repaired.as_str()
    )]
    VerdictNotStated {
        /// The candidate.
        candidate_id: String,
        /// The verdict in the repaired reply.
        repaired: Verdict,
    },
    /// The repair returned fewer candidates than the prior reply wrote claims.
    #[error(
        "the repair returned {repaired} candidate(s) where the prior reply wrote {claims} claim(s)"
    )]
    CandidatesMissing {
        /// Claims the prior reply wrote ([`claim_keys`]).
        claims: usize,
        /// Candidates in the repaired reply.
        repaired: usize,
    },
    /// The repair added a candidate the prior reply does not contain.
    #[error(
        "the repair added a candidate at {}:{}-{} that the prior reply does not contain",
        .0.path, .0.start_line, .0.end_line
    )]
    CandidateAdded(CandidateLocation),
    /// The repair dropped a candidate the prior reply contained in full.
    #[error(
        "the repair dropped the candidate at {}:{}-{} that the prior reply contained in full",
        .0.path, .0.start_line, .0.end_line
    )]
    CandidateDropped(CandidateLocation),
    /// A prose reply named a place in a changed file that the repair kept neither as a
    /// candidate nor as a dismissed concern.
    #[error(
        "the prior reply names {path}:{line}, but the repair kept no candidate or dismissed concern there"
    )]
    LocationDropped {
        /// The changed file.
        path: String,
        /// The line the prior reply names.
        line: u64,
    },
}

/// Every complete JSON object in `text` (outermost first, then their nested objects),
/// found by trying to read one value at each `{` not inside an object already read.
fn complete_objects(text: &str) -> Vec<Value> {
    let mut all = Vec::new();
    fn walk(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Object(map) => {
                out.push(v.clone());
                map.values().for_each(|x| walk(x, out));
            }
            Value::Array(items) => items.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    outer_objects(text)
        .iter()
        .for_each(|(_, v)| walk(v, &mut all));
    all
}

/// The JSON objects of `text` that are not inside another one it holds, each with its
/// source text.
fn outer_objects(text: &str) -> Vec<(&str, Value)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find('{') {
        let start = at + offset;
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                at = start + stream.byte_offset();
                found.push((&text[start..at], value));
            }
            _ => at = start + 1,
        }
    }
    found
}

/// The candidates the prior reply contains in full: complete JSON objects with a string
/// `path`, `startLine` and `endLine` as integers (or integers written as strings) and a
/// string `claim`.
pub fn complete_prior_candidates(prior: &str) -> Vec<CandidateLocation> {
    let mut out: Vec<CandidateLocation> = complete_objects(prior)
        .iter()
        .filter(|o| o["claim"].is_string())
        .filter_map(|o| {
            Some(CandidateLocation {
                path: o["path"].as_str()?.to_string(),
                start_line: line_number(&o["startLine"])?,
                end_line: line_number(&o["endLine"])?,
            })
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A line number as a prior reply wrote it: a number, or a number written as a string
/// (`"28"`, a slip a repair fixes; the candidate is still written in full).
fn line_number(value: &Value) -> Option<u64> {
    value
        .as_u64()
        .or_else(|| value.as_str()?.trim().parse().ok())
}

/// What a repair must keep of a prior reply: exactly what [`check_candidate_repair`]
/// demands of it, for a repair shown only part of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RepairDemands {
    /// The candidates it contains in full (complete JSON objects with a claim), as
    /// written, one per place.
    pub candidates: Vec<Value>,
    /// The places a prose reply names in the changed files ([`prose_locations`]).
    pub places: Vec<(String, u64)>,
    /// How many claims it writes in any notation ([`claim_keys`]).
    pub claims: usize,
}

impl RepairDemands {
    /// True when the repair owes nothing beyond what it is asked anyway.
    pub fn is_empty(&self) -> bool {
        self.candidates.is_empty() && self.places.is_empty() && self.claims == 0
    }
}

/// Rule (repair of a reply shown in part): what [`check_candidate_repair`] will demand of
/// the repair of `prior`, computed from the whole reply, so a repair shown only the
/// part that fits its request can be told what the rest holds.
pub fn repair_demands(prior: &str, expected: &[String]) -> RepairDemands {
    let mut seen: Vec<CandidateLocation> = Vec::new();
    let candidates = complete_objects(prior)
        .into_iter()
        .filter(|o| o["claim"].is_string())
        .filter(|o| {
            let at = CandidateLocation {
                path: o["path"].as_str().unwrap_or_default().to_string(),
                start_line: line_number(&o["startLine"]).unwrap_or_default(),
                end_line: line_number(&o["endLine"]).unwrap_or_default(),
            };
            let new = !seen.contains(&at);
            seen.push(at);
            new
        })
        .collect();
    RepairDemands {
        candidates,
        places: prose_locations(prior, expected),
        claims: claim_keys(prior),
    }
}

/// How many complete `claim` entries the text holds, in any notation: `claim: …`
/// (YAML), `'claim': '…'` (a Python dict), `"claim": "…"` (JSON), `claim = …`; each is a
/// candidate the reply wrote in full. A quoted claim cut off before its closing quote
/// is not complete (a cut candidate cannot be kept whole, so a repair may leave it).
pub fn claim_keys(text: &str) -> usize {
    text.match_indices("claim")
        .filter(|(at, _)| {
            let before = text[..*at].chars().next_back();
            let starts = before.is_none_or(|c| !c.is_alphanumeric() && c != '_');
            let rest = text[at + "claim".len()..].trim_start_matches(['"', '\'']);
            let Some(value) = rest.trim_start().strip_prefix([':', '=']) else {
                return false;
            };
            let value = value.trim_start_matches([' ', '\t']);
            starts && complete_value(value)
        })
        .count()
}

/// Whether a key's value at the start of `value` is whole: a quoted string closed on
/// its line, or unquoted text before the line's end.
fn complete_value(value: &str) -> bool {
    match value.chars().next() {
        Some(q @ ('"' | '\'')) => {
            let line = value[1..].split('\n').next().unwrap_or_default();
            let mut escaped = false;
            line.chars().any(|c| {
                let closes = c == q && !escaped;
                escaped = c == '\\' && !escaped;
                closes
            })
        }
        Some(c) => c != '\n' && c != '\r',
        None => false,
    }
}

/// True when `number` occurs in `text` as a whole number (not inside a longer one).
fn has_number(text: &str, number: u64) -> bool {
    text.split(|c: char| !c.is_ascii_digit())
        .any(|t| t == number.to_string())
}

/// Rule (coverage retry, candidates): the retry asks for one complete replacement, but a
/// candidate is decided by the verifier, not dropped by a second answer. The first
/// answer's candidates that the retry's answer does not hold at the same place (path and
/// lines) are kept beside it: their indices in `first`, in order.
pub fn carried_candidates(first: &[CandidateLocation], retry: &[CandidateLocation]) -> Vec<usize> {
    first
        .iter()
        .enumerate()
        .filter(|(i, c)| !retry.contains(c) && !first[..*i].contains(c))
        .map(|(i, _)| i)
        .collect()
}

/// The places a prose reply (one holding no JSON object) names in the changed files:
/// each `path:line` or `path:line-line` whose path is exactly one of `expected` (not part
/// of a longer path), as the path and its first line, by expected file and then in the
/// reply's order. Every occurrence counts, also one that overlaps an earlier one (`a a`
/// in `a a a:5` names line 5 of `a a`).
pub fn prose_locations(prior: &str, expected: &[String]) -> Vec<(String, u64)> {
    if !outer_objects(prior).is_empty() {
        return Vec::new();
    }
    let part_of_path = |c: char| c.is_alphanumeric() || "/._-".contains(c);
    let mut found = Vec::new();
    for path in expected.iter().filter(|p| !p.is_empty()) {
        for at in occurrences(prior, path) {
            if prior[..at].chars().next_back().is_some_and(part_of_path) {
                continue;
            }
            let Some(rest) = prior[at + path.len()..].strip_prefix(':') else {
                continue;
            };
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if let Ok(line) = rest[..digits].parse::<u64>() {
                found.push((path.clone(), line));
            }
        }
    }
    found
}

/// Where `pattern` (not empty) starts in `text`, overlapping occurrences included.
fn occurrences<'a>(text: &'a str, pattern: &'a str) -> impl Iterator<Item = usize> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = from + text.get(from..)?.find(pattern)?;
        from = at + text[at..].chars().next().map_or(1, char::len_utf8);
        Some(at)
    })
}

/// Rule (repair, candidates): a repair fixes syntax only. It may not drop a candidate
/// the prior reply contained in full (a complete JSON object), nor return fewer
/// candidates than the prior reply wrote claims in any notation (YAML, a Python dict,
/// JSON: [`claim_keys`]), nor drop a place a prose reply names in a changed file
/// ([`prose_locations`]: it must reappear as a candidate or among `dismissed`, lines
/// holding it); and it may not add one: every repaired candidate either is a complete
/// prior candidate (same path and lines) or its path and first line both occur in the
/// prior reply's text.
///
/// One exception: the repair's contract holds at most `bound` candidates. When the prior
/// reply owes more than that and the repair holds `bound`, the rest cannot fit; they are
/// returned ([`PastRepairBound`]) for the host to name as not verified, never dropped in
/// silence.
pub fn check_candidate_repair(
    prior: &str,
    repaired: &[CandidateLocation],
    (expected, dismissed): (&[String], &[CandidateLocation]),
    bound: usize,
) -> Result<PastRepairBound, RepairViolation> {
    let holds = |l: &CandidateLocation, path: &str, line: u64| {
        l.path == path && l.start_line <= line && line <= l.end_line
    };
    let places = prose_locations(prior, expected);
    let complete = complete_prior_candidates(prior);
    let claims = claim_keys(prior);
    let owed = claims.max(complete.len()).max(places.len());
    let at_bound = owed > bound && repaired.len() >= bound;
    let mut past = PastRepairBound::default();
    for (path, line) in places {
        if !repaired
            .iter()
            .chain(dismissed)
            .any(|l| holds(l, &path, line))
        {
            if !at_bound {
                return Err(RepairViolation::LocationDropped { path, line });
            }
            past.places.push((path, line));
        }
    }
    for dropped in complete.iter().filter(|c| !repaired.contains(c)) {
        if !at_bound {
            return Err(RepairViolation::CandidateDropped(dropped.clone()));
        }
        past.candidates.push(dropped.clone());
    }
    if repaired.len() < claims && !at_bound {
        return Err(RepairViolation::CandidatesMissing {
            claims,
            repaired: repaired.len(),
        });
    }
    for c in repaired {
        let stated = complete.contains(c)
            || (!c.path.is_empty() && prior.contains(&c.path) && has_number(prior, c.start_line));
        if !stated {
            return Err(RepairViolation::CandidateAdded(c.clone()));
        }
    }
    if at_bound {
        past.count = owed
            .saturating_sub(repaired.len())
            .max(past.candidates.len() + past.places.len());
    }
    Ok(past)
}

/// What a repair held at its candidate bound left of the prior reply
/// ([`check_candidate_repair`]): none of it is verified, and the host names it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PastRepairBound {
    /// How many of the prior reply's candidates the repair could not hold (the most of
    /// its claims, complete candidates and prose places, less the repair's candidates).
    pub count: usize,
    /// The complete prior candidates the repair does not hold, by place.
    pub candidates: Vec<CandidateLocation>,
    /// The places a prose prior reply names that the repair does not hold.
    pub places: Vec<(String, u64)>,
}

/// The verdicts the prior reply states, by candidate id: the `"candidateId": "…"` and
/// `"decision": "…"` of one JSON object, in either order, also when the object was cut
/// off after them (pairs outside any object are paired in order, an id with the next
/// decision or a decision with the next id). An id whose verdicts disagree (a draft and
/// a final answer) states none.
pub fn prior_verdicts(prior: &str) -> Vec<(String, Verdict)> {
    let mut stated: Vec<(String, Verdict)> = Vec::new();
    // The pending id or decision of each object (by its opening brace's offset).
    let mut pending: Vec<(Option<usize>, Option<String>, Option<Verdict>)> = Vec::new();
    for (object, key, value) in quoted_pairs(prior) {
        let at = match pending.iter().position(|(o, ..)| *o == object) {
            Some(at) => at,
            None => {
                pending.push((object, None, None));
                pending.len() - 1
            }
        };
        let slot = &mut pending[at];
        match key.as_str() {
            "candidateId" => slot.1 = Some(value),
            "decision" => slot.2 = value.parse::<Verdict>().ok(),
            _ => continue,
        }
        if let (Some(id), Some(verdict)) = (&slot.1, slot.2) {
            stated.push((id.clone(), verdict));
            (slot.1, slot.2) = (None, None);
        }
    }
    let mut out: Vec<(String, Verdict)> = Vec::new();
    for (id, verdict) in &stated {
        let agreed = stated.iter().all(|(i, v)| i != id || v == verdict);
        if agreed && !out.iter().any(|(known, _)| known == id) {
            out.push((id.clone(), *verdict));
        }
    }
    out
}

/// Every `"key": "value"` pair of JSON-looking text, in order, with the offset of the
/// innermost `{` open around it (`None` outside any); values unescaped, a pair whose
/// value is cut off left out. Braces inside strings do not count.
fn quoted_pairs(text: &str) -> Vec<(Option<usize>, String, String)> {
    let mut strings: Vec<(usize, usize, String, Option<usize>)> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find(['"', '{', '}']) {
        let start = at + offset;
        match text.as_bytes()[start] {
            b'{' => {
                open.push(start);
                at = start + 1;
                continue;
            }
            b'}' => {
                open.pop();
                at = start + 1;
                continue;
            }
            _ => {}
        }
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<String>();
        match stream.next() {
            Some(Ok(s)) => {
                let end = start + stream.byte_offset();
                strings.push((start, end, s, open.last().copied()));
                at = end;
            }
            _ => at = start + 1,
        }
    }
    let mut out = Vec::new();
    for pair in strings.windows(2) {
        let (_, key_end, key, object) = &pair[0];
        let (value_start, _, value, _) = &pair[1];
        if text[*key_end..*value_start].trim() == ":" {
            out.push((*object, key.clone(), value.clone()));
        }
    }
    out
}

/// Rule (repair, verifier): a repair fixes syntax only, so it never decides a verdict.
/// Each verdict of the repaired reply must be the one the prior reply states for that
/// candidate in its own JSON (see [`prior_verdicts`]), and every verdict stated there
/// must be kept. A verdict given only in words (prose, YAML, another key) is not read:
/// words such as "cannot be verified; rejected" name both verdicts, and a repair model
/// without tools choosing between them once published a rejected candidate. The repair
/// then fails, and the stage with it: the review is incomplete, never decided by a
/// repair.
pub fn check_decision_repair(
    prior: &str,
    repaired: &[(String, Verdict)],
) -> Result<(), RepairViolation> {
    let stated = prior_verdicts(prior);
    for (id, verdict) in &stated {
        let now = repaired.iter().find(|(r, _)| r == id).map(|(_, v)| *v);
        if now != Some(*verdict) {
            return Err(RepairViolation::VerdictChanged {
                candidate_id: id.clone(),
                prior: *verdict,
                repaired: now,
            });
        }
    }
    match repaired
        .iter()
        .find(|(id, _)| !stated.iter().any(|(s, _)| s == id))
    {
        Some((id, verdict)) => Err(RepairViolation::VerdictNotStated {
            candidate_id: id.clone(),
            repaired: *verdict,
        }),
        None => Ok(()),
    }
}

/// What the prior reply's own JSON says of its coverage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriorReceipt {
    /// No complete JSON object of it holds a receipt (`coverage` with a boolean
    /// `complete` and a list of path strings `reviewedFiles`).
    Absent,
    /// Every receipt it holds says `complete: true` and lists exactly the expected files.
    Exact,
    /// A receipt it holds is incomplete or lists other files than the expected ones, or
    /// an object of the reply repeats a key.
    NotExact,
    /// It holds a `coverage` object, but none it holds is a receipt: `complete` is not a
    /// boolean, or `reviewedFiles` not a list of path strings (`"complete": "yes"`).
    Malformed,
}

/// The receipts the prior reply's complete JSON objects hold, read as [`PriorReceipt`]
/// against `expected` (compared exactly, as [`compare_coverage`] compares a receipt).
pub fn prior_receipt(prior: &str, expected: &[String]) -> PriorReceipt {
    // A repeated key makes an object ambiguous (a parser keeps the last copy silently).
    let repeats_a_key = outer_objects(prior)
        .iter()
        .any(|(source, _)| vouch_json::duplicate_key(source).is_some());
    let objects = complete_objects(prior);
    let coverages: Vec<&Value> = objects.iter().filter_map(|o| o.get("coverage")).collect();
    let receipts: Vec<CoverageReceipt> = coverages
        .iter()
        .filter_map(|c| {
            let complete = c.get("complete")?.as_bool()?;
            let files = c.get("reviewedFiles")?.as_array()?;
            let reviewed_files = files
                .iter()
                .map(|f| f.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()?;
            Some(CoverageReceipt {
                complete,
                reviewed_files,
            })
        })
        .collect();
    if receipts.is_empty() && !coverages.is_empty() {
        PriorReceipt::Malformed
    } else if receipts.is_empty() {
        PriorReceipt::Absent
    } else if !repeats_a_key
        && receipts.len() == coverages.len()
        && receipts
            .iter()
            .all(|r| compare_coverage(expected, r).complete)
    {
        PriorReceipt::Exact
    } else {
        PriorReceipt::NotExact
    }
}

/// Rule (repair, receipts): a repaired `complete: true` stands only when the prior
/// reply's own JSON receipt said `complete: true` with exactly the expected files: a
/// statement the host checks itself. A prior receipt that was incomplete, listed other
/// files or repeated a key stays incomplete, and a prose-only claim of coverage is never
/// enough (the host cannot tell "I reviewed every file" from "I reviewed every file but
/// one"): both are recorded as `complete: false`, which leads to the coverage retry.
pub fn repaired_full_coverage(prior: &str, expected: &[String]) -> Result<(), ReceiptProblem> {
    match prior_receipt(prior, expected) {
        PriorReceipt::Exact => Ok(()),
        PriorReceipt::NotExact => Err(ReceiptProblem::PriorReceiptNotExact),
        PriorReceipt::Absent => Err(ReceiptProblem::NoPriorReceipt),
        PriorReceipt::Malformed => Err(ReceiptProblem::PriorReceiptMalformed),
    }
}

#[cfg(test)]
mod tests;
