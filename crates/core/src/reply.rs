//! Rules for one model reply of a stage execution: what a cut reply leads to, what a
//! repair may change, and when a repaired full-coverage claim stands.
//!
//! A repair fixes syntax only. These rules compare the repaired reply with the prior
//! (invalid) reply's text, so a repair can never be the place where a verdict flips, a
//! candidate appears or vanishes, or coverage is claimed without the model having said so.

use serde_json::Value;

use crate::coverage::{CoverageReceipt, compare_coverage};
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
    /// The repair gave a verdict the prior reply never names for the candidate.
    #[error(
        "the repair decided `{candidate_id}` as {} where the prior reply names no such verdict for it",
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
}

/// Every complete JSON object in `text` (outermost first, then their nested objects),
/// found by trying to read one value at each `{` not inside an object already read.
fn complete_objects(text: &str) -> Vec<Value> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(offset) = text[at..].find('{') {
        let start = at + offset;
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(value)) => {
                at = start + stream.byte_offset();
                found.push(value);
            }
            _ => at = start + 1,
        }
    }
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
    found.iter().for_each(|v| walk(v, &mut all));
    all
}

/// The candidates the prior reply contains in full: complete JSON objects with a string
/// `path`, integer `startLine` and `endLine` and a string `claim`.
pub fn complete_prior_candidates(prior: &str) -> Vec<CandidateLocation> {
    let mut out: Vec<CandidateLocation> = complete_objects(prior)
        .iter()
        .filter(|o| o["claim"].is_string())
        .filter_map(|o| {
            Some(CandidateLocation {
                path: o["path"].as_str()?.to_string(),
                start_line: o["startLine"].as_u64()?,
                end_line: o["endLine"].as_u64()?,
            })
        })
        .collect();
    out.sort();
    out.dedup();
    out
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

/// Rule (repair, candidates): a repair fixes syntax only. It may not drop a candidate
/// the prior reply contained in full (a complete JSON object), nor return fewer
/// candidates than the prior reply wrote claims in any notation (YAML, a Python dict,
/// JSON: [`claim_keys`]); and it may not add one: every repaired candidate either is a
/// complete prior candidate (same path and lines) or its path and first line both occur
/// in the prior reply's text.
pub fn check_candidate_repair(
    prior: &str,
    repaired: &[CandidateLocation],
) -> Result<(), RepairViolation> {
    let complete = complete_prior_candidates(prior);
    if let Some(dropped) = complete.iter().find(|c| !repaired.contains(c)) {
        return Err(RepairViolation::CandidateDropped(dropped.clone()));
    }
    let claims = claim_keys(prior);
    if repaired.len() < claims {
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
    Ok(())
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
/// A verdict the prior reply states for a candidate in JSON (see [`prior_verdicts`])
/// must be the repaired reply's verdict for that candidate; changing or dropping it is a
/// violation. For every other candidate, read as words however the prior reply was
/// written (prose, YAML, another key, JSON whose verdicts disagree), the repaired
/// verdict must be one the prior reply names for it ([`named_verdicts`]), and where it
/// names `verified` the repair cannot make it anything else: a repair never hides a
/// defect the model said it verified.
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
    let ids: Vec<&str> = repaired.iter().map(|(id, _)| id.as_str()).collect();
    let unstated = repaired
        .iter()
        .filter(|(id, _)| !stated.iter().any(|(s, _)| s == id));
    for (id, verdict) in unstated {
        let named = named_verdicts(prior, id, &ids);
        if named.contains(&Verdict::Verified) && *verdict != Verdict::Verified {
            return Err(RepairViolation::VerdictChanged {
                candidate_id: id.clone(),
                prior: Verdict::Verified,
                repaired: Some(*verdict),
            });
        }
        if !named.contains(verdict) {
            return Err(RepairViolation::VerdictNotStated {
                candidate_id: id.clone(),
                repaired: *verdict,
            });
        }
    }
    Ok(())
}

/// The verdict words (`verified`, `rejected`, `unresolved`, any case, whole words) the
/// prior reply names for candidate `id`: in the text around each mention of it up to the
/// mentions of the other candidates `ids` (the whole reply when it never names `id`).
pub fn named_verdicts(prior: &str, id: &str, ids: &[&str]) -> Vec<Verdict> {
    let others: Vec<usize> = ids
        .iter()
        .filter(|other| **other != id && !other.is_empty())
        .flat_map(|other| prior.match_indices(*other).map(|(at, _)| at))
        .collect();
    let mine: Vec<usize> = if id.is_empty() {
        vec![]
    } else {
        prior.match_indices(id).map(|(at, _)| at).collect()
    };
    let spans: Vec<(usize, usize)> = if mine.is_empty() {
        vec![(0, prior.len())]
    } else {
        mine.iter()
            .map(|&at| {
                let from = others.iter().filter(|&&o| o < at).max().map_or(0, |&o| o);
                let to = others
                    .iter()
                    .filter(|&&o| o > at)
                    .min()
                    .map_or(prior.len(), |&o| o);
                (from, to)
            })
            .collect()
    };
    let mut named = Vec::new();
    for (from, to) in spans {
        let text = prior[from..to].to_lowercase();
        for word in text.split(|c: char| !c.is_alphanumeric()) {
            if let Ok(v) = word.parse::<Verdict>()
                && !named.contains(&v)
            {
                named.push(v);
            }
        }
    }
    named
}

/// Why a repaired `complete: true` does not stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum QuoteProblem {
    /// No quote, or only whitespace.
    #[error("no fullCoverageQuote was given")]
    Missing,
    /// The quote is not a span of the prior reply.
    #[error("the fullCoverageQuote is not a verbatim span of the prior reply")]
    NotInPrior,
    /// The quote neither lists every expected path nor says all files were reviewed.
    #[error("the fullCoverageQuote does not state that every expected file was reviewed")]
    NoStatement,
    /// The quote negates, limits or hedges its statement.
    #[error("the fullCoverageQuote negates, limits or hedges its coverage statement")]
    Qualified,
    /// The prior reply's own JSON receipt was incomplete or did not list exactly the
    /// expected files: a repair cannot make it complete.
    #[error(
        "the prior reply's own coverage receipt was incomplete or did not list exactly the expected files"
    )]
    PriorReceiptNotExact,
}

/// What the prior reply's own JSON says of its coverage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriorReceipt {
    /// No complete JSON object of it holds a receipt (`coverage` with a boolean
    /// `complete` and a list of path strings `reviewedFiles`).
    Absent,
    /// Every receipt it holds says `complete: true` and lists exactly the expected files.
    Exact,
    /// A receipt it holds is incomplete or lists other files than the expected ones.
    NotExact,
}

/// The receipts the prior reply's complete JSON objects hold, read as [`PriorReceipt`]
/// against `expected` (compared exactly, as [`compare_coverage`] compares a receipt).
pub fn prior_receipt(prior: &str, expected: &[String]) -> PriorReceipt {
    let receipts: Vec<CoverageReceipt> = complete_objects(prior)
        .iter()
        .filter_map(|o| o.get("coverage"))
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
    if receipts.is_empty() {
        PriorReceipt::Absent
    } else if receipts
        .iter()
        .all(|r| compare_coverage(expected, r).complete)
    {
        PriorReceipt::Exact
    } else {
        PriorReceipt::NotExact
    }
}

/// Rule (repair, receipts): a repaired `complete: true` stands when the prior reply
/// stated full coverage explicitly. Its own JSON receipt saying `complete: true` with
/// exactly the expected files is such a statement, checked by the host, and needs no
/// quote; a prior JSON receipt that was incomplete or listed other files stays so,
/// whatever the repair quotes; without any JSON receipt (a prose-only claim), the
/// repair's quote must state it ([`full_coverage_quote`]).
pub fn repaired_full_coverage(
    prior: &str,
    quote: Option<&str>,
    expected: &[String],
) -> Result<(), QuoteProblem> {
    match prior_receipt(prior, expected) {
        PriorReceipt::Exact => Ok(()),
        PriorReceipt::NotExact => Err(QuoteProblem::PriorReceiptNotExact),
        PriorReceipt::Absent => full_coverage_quote(prior, quote, expected),
    }
}

/// Words that make a coverage statement false or partial.
const NEGATIONS: &[&str] = &[
    "not",
    "no",
    "never",
    "none",
    "nor",
    "without",
    "except",
    "excluding",
    "but",
    "only",
    "some",
    "most",
    "few",
    "partially",
    "partly",
    "skipped",
    "skip",
    "missed",
    "unable",
    "cannot",
    "yet",
    "until",
    "unless",
    "besides",
    "other",
    "remaining",
    "rest",
    "nobody",
    "neither",
    "hardly",
    "barely",
    "failed",
    "fail",
    "fails",
    "false",
    "wish",
    "whether",
    "todo",
    "fixme",
    "tbd",
    "pending",
];

/// Words after a quoted coverage statement, in its sentence, that narrow it ("… every
/// changed file except notes.txt"). Fewer than before it: "and found no defects" after
/// the statement does not narrow it.
const NARROWING_AFTER: &[&str] = &[
    "except",
    "excluding",
    "but",
    "besides",
    "other",
    "apart",
    "save",
    "yet",
    "until",
    "unless",
    "not",
    "only",
    "skipped",
    "skip",
    "partially",
    "partly",
    "remaining",
    "rest",
    "if",
];

/// Words that make a coverage statement uncertain or not yet done.
const HEDGES: &[&str] = &[
    "might",
    "may",
    "maybe",
    "perhaps",
    "possibly",
    "probably",
    "likely",
    "seem",
    "seems",
    "seemed",
    "appear",
    "appears",
    "think",
    "believe",
    "guess",
    "assume",
    "should",
    "would",
    "could",
    "will",
    "shall",
    "mostly",
    "almost",
    "nearly",
    "roughly",
    "hopefully",
    "try",
    "tried",
    "attempt",
    "attempted",
    "plan",
    "going",
    "if",
];

/// Stems of the verbs that say a file was looked at.
const REVIEW_STEMS: &[&str] = &[
    "review", "inspect", "examin", "check", "read", "analy", "cover", "look", "audit",
];

/// Universal quantifiers.
const ALL_WORDS: &[&str] = &["all", "every", "each"];

/// Words that may stand between a quantifier and "file(s)" without narrowing it.
const NEUTRAL_WORDS: &[&str] = &[
    "the",
    "of",
    "these",
    "those",
    "its",
    "my",
    "changed",
    "expected",
    "listed",
    "assigned",
    "modified",
    "canonical",
    "given",
    "diff",
    "change",
    "changeset",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "single",
];

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '\\' | '.' | '~' | '+' | '@')
}

/// True when `path` occurs in `text` as a whole path: not preceded by a path character,
/// and followed by none (a sentence's final `.` is allowed).
fn lists_path(text: &str, path: &str) -> bool {
    if path.is_empty() {
        return false;
    }
    text.match_indices(path).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let mut after = text[at + path.len()..].chars();
        let next = after.next();
        let following = after.next();
        let before_ok = before.is_none_or(|c| !is_path_char(c));
        let after_ok = match next {
            None => true,
            Some('.') => following.is_none_or(|c| !is_path_char(c)),
            Some(c) => !is_path_char(c),
        };
        before_ok && after_ok
    })
}

/// The lower-case words of `text` (letters, digits and apostrophes), with every
/// expected path removed first so a path's words never count as prose.
fn words(text: &str, expected: &[String]) -> Vec<String> {
    let mut text = text.replace('\u{2019}', "'");
    let mut paths: Vec<&String> = expected.iter().collect();
    paths.sort_by_key(|p| std::cmp::Reverse(p.len()));
    for p in paths {
        if !p.is_empty() {
            text = text.replace(p.as_str(), " ");
        }
    }
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\'').to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Most words between a quantifier and "file(s)" ("every one of the 11 expected changed
/// files").
const MAX_WORDS_TO_FILES: usize = 8;

/// True when `words` say all/every/each … file(s), with only neutral words between.
fn says_all_files(words: &[String]) -> bool {
    words.iter().enumerate().any(|(i, w)| {
        let after = || words[i + 1..].iter().take(MAX_WORDS_TO_FILES + 1);
        ALL_WORDS.contains(&w.as_str())
            && after().any(|n| n.starts_with("file"))
            && after().take_while(|n| !n.starts_with("file")).all(|n| {
                NEUTRAL_WORDS.contains(&n.as_str()) || n.chars().all(|c| c.is_ascii_digit())
            })
    })
}

/// Rule (repair quote, issue #9 item 5): a repaired `complete: true` stands only when its
/// `fullCoverageQuote` is a verbatim span of the prior reply that by itself states that
/// every expected file was reviewed: it says a file was reviewed (a word such as
/// reviewed, inspected, examined, checked, read, analysed, covered), and either lists
/// every canonical path as a whole path, or says all/every/each (changed, expected, …)
/// file(s); and it carries no negation, limitation or hedge ("not all files", "only",
/// "except", "should", "probably", "n't", …), nor does the rest of its sentence in the
/// prior reply (a negation or hedge before it, an exception after it: "I never reviewed
/// …", "… every file except notes.txt"). Anything else is downgraded to
/// `complete: false`.
pub fn full_coverage_quote(
    prior: &str,
    quote: Option<&str>,
    expected: &[String],
) -> Result<(), QuoteProblem> {
    let quote = quote.map(str::trim).unwrap_or_default();
    if quote.is_empty() {
        return Err(QuoteProblem::Missing);
    }
    if !prior.contains(quote) {
        return Err(QuoteProblem::NotInPrior);
    }
    let said = words(quote, expected);
    let reviewed = said
        .iter()
        .any(|w| REVIEW_STEMS.iter().any(|s| w.starts_with(s)));
    let lists_all = !expected.is_empty() && expected.iter().all(|p| lists_path(quote, p));
    if !reviewed || !(lists_all || says_all_files(&said)) {
        return Err(QuoteProblem::NoStatement);
    }
    let qualifies = |w: &String| {
        NEGATIONS.contains(&w.as_str()) || HEDGES.contains(&w.as_str()) || w.ends_with("n't")
    };
    let narrows = |w: &String| NARROWING_AFTER.contains(&w.as_str()) || w.ends_with("n't");
    let in_context_qualified =
        sentence_contexts(prior, quote)
            .into_iter()
            .any(|(before, after)| {
                words(&before, expected).iter().any(qualifies)
                    || words(&after, expected).iter().any(narrows)
                    || after.ends_with('?')
            });
    // A question states nothing ("Did I review all changed files? No.").
    if said.iter().any(qualifies) || quote.contains('?') || in_context_qualified {
        return Err(QuoteProblem::Qualified);
    }
    Ok(())
}

/// Most bytes of a quote's clause read on either side of it.
const MAX_CONTEXT_BYTES: usize = 400;

/// For each occurrence of `quote` in `prior`, the rest of its clause before it, and after
/// it the rest of its clause plus the first word of the next clause (at most
/// [`MAX_CONTEXT_BYTES`] on either side): "I never reviewed …" carries "I never", "…
/// every file, except notes.txt" carries "except", while "…, and apart from what the
/// tests do not cover I see no defect" carries only "and". A clause ends at `,`, `:`,
/// `(` or `)`; a sentence at `.`, `!`, `?` or `;` followed by white space (not the dot of
/// `calc.py`), at a blank line, and at a JSON string's or object's edge (`"`, `{`, `}`).
fn sentence_contexts(prior: &str, quote: &str) -> Vec<(String, String)> {
    let edges = Edges(prior.as_bytes());
    prior
        .match_indices(quote)
        .map(|(start, _)| {
            let end = start + quote.len();
            let mut from = start.saturating_sub(MAX_CONTEXT_BYTES);
            while !prior.is_char_boundary(from) {
                from += 1;
            }
            let mut limit = (end + MAX_CONTEXT_BYTES).min(prior.len());
            while !prior.is_char_boundary(limit) {
                limit -= 1;
            }
            let before = clause_before(prior, &edges, from, start);
            // A quote that ends its sentence has nothing after it.
            let after = match quote.ends_with(['.', '!', '?', ';']) {
                true => String::new(),
                false => clause_after(prior, &edges, end, limit),
            };
            (before, after)
        })
        .collect()
}

/// Where clauses and sentences of a text end (see [`sentence_contexts`]).
struct Edges<'a>(&'a [u8]);

impl Edges<'_> {
    fn ends_sentence(&self, i: usize) -> bool {
        let b = self.0;
        matches!(b[i], b'"' | b'{' | b'}')
            || (matches!(b[i], b'.' | b'!' | b'?' | b';')
                && b.get(i + 1).is_none_or(u8::is_ascii_whitespace))
            || b[i..].starts_with(b"\n\n")
    }

    fn ends_clause(&self, i: usize) -> bool {
        matches!(self.0[i], b',' | b':' | b'(' | b')') || self.ends_sentence(i)
    }
}

/// The text of `prior[from..start]` in the clause that ends at `start`, with the last
/// word of the clause before when it is in the same sentence ("TODO: reviewed all …").
fn clause_before(prior: &str, edges: &Edges, from: usize, start: usize) -> String {
    let clause = (from..start).rev().find(|&i| edges.ends_clause(i));
    let mut before = prior[clause.map_or(from, |i| i + 1)..start].to_string();
    if let Some(i) = clause.filter(|&i| !edges.ends_sentence(i)) {
        let last: String = prior[from..i]
            .trim_end()
            .chars()
            .rev()
            .take_while(|c| c.is_alphanumeric() || *c == '\'')
            .collect();
        before.insert(0, ' ');
        before.insert_str(0, &last.chars().rev().collect::<String>());
    }
    before
}

/// The text of `prior[end..limit]` in the clause that starts at `end`, then a `?` when
/// the sentence is a question, or else the first word of the next clause.
fn clause_after(prior: &str, edges: &Edges, end: usize, limit: usize) -> String {
    let to = (end..limit)
        .find(|&i| edges.ends_clause(i))
        .unwrap_or(limit);
    let mut after = prior[end..to].to_string();
    if to < limit && edges.0[to] == b'?' {
        after.push('?');
    } else if to < limit && !edges.ends_sentence(to) {
        let next: String = prior[to + 1..limit]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '\'')
            .collect();
        after.push(' ');
        after.push_str(&next);
    }
    after
}

#[cfg(test)]
mod tests;
