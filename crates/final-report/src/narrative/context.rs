//! Whether a sentence is about this change: qualifiers (someone else, the past,
//! another change, a simulation) and the pull requests a sentence names.

use super::*;

/// Words that place a merge in the past, before this session.
pub(super) const HISTORICAL: &[&str] = &[
    "ago",
    "previously",
    "earlier",
    "yesterday",
    "historically",
    "historical",
    "formerly",
    "originally",
];

/// Words that make a merge a simulation (recorded and aborted), not this PR's merge.
pub(super) const SIMULATION: &[&str] = &[
    "simulation",
    "simulated",
    "simulate",
    "simulating",
    "scratch",
    "trial",
    "throwaway",
    "dry",
    "aborted",
    "abort",
];

/// Words whose presence means a sentence asserts state.
pub(super) const STATE_WORDS: &[&str] = &[
    "merged",
    "mergeable",
    "approved",
    "landed",
    "shipped",
    "lgtm",
    "passed",
    "green",
    "succeeded",
    "closed",
];

/// Why a sentence is about another change than `subject`'s by naming another pull
/// request's number (anywhere in the sentence), and whether it describes a simulation.
/// Qualifier words ("another", "earlier", ...) are read per claim by [`qualifiers`].
pub(super) fn other_change(
    sentence: &str,
    tokens: &[String],
    subject: Subject,
) -> (Option<String>, bool) {
    let refs = pr_references(sentence);
    let other = subject
        .pull_request
        .and_then(|own| refs.iter().find(|n| **n != own));
    let names_own = subject.pull_request.is_some_and(|own| refs.contains(&own));
    let simulation = tokens.iter().any(|t| SIMULATION.contains(&t.as_str()))
        || tokens
            .windows(2)
            .any(|w| w[0] == "test" && (w[1] == "merged" || w[1] == "merge"));
    let named = match (other, names_own) {
        (Some(n), false) => Some(format!("it names pull request #{n}, not the reviewed one")),
        _ => None,
    };
    (named, simulation)
}

/// What a qualifier word says about the act it qualifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum QualifierKind {
    /// Someone else did it (`another reviewer`, `someone`, `externally`).
    External,
    /// It happened before this session (`earlier`, `two weeks ago`, `last week`).
    Historical,
    /// It is about another change (`another PR`, `the previous change`).
    OtherChange,
}

impl QualifierKind {
    pub(super) fn reason(self) -> &'static str {
        match self {
            Self::External => "it attributes the act to someone else",
            Self::Historical => "it describes an earlier, historical merge",
            Self::OtherChange => "it is about another pull request",
        }
    }
}

/// One qualifier word of a sentence.
#[derive(Debug, Clone, Copy)]
pub(super) struct Qualifier {
    pub(super) kind: QualifierKind,
    /// Token index of the qualifier word.
    pub(super) at: usize,
    /// For a qualifier inside a noun phrase (`the earlier CI run`, `another reviewer`,
    /// `yesterday's release`), the token index where that noun phrase starts (its
    /// determiner included). `None` for an adverb, which qualifies its whole clause.
    pub(super) phrase: Option<usize>,
}

/// Determiners and possessives that open a noun phrase.
pub(super) const DETERMINERS: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "its", "our", "their", "my", "his", "her",
    "your",
];

/// Prepositions and subordinators that put the noun phrase after them outside the
/// act's subject and object ("merged it after the earlier CI run").
pub(super) const PREPOSITIONS: &[&str] = &[
    "after",
    "before",
    "since",
    "following",
    "during",
    "with",
    "without",
    "from",
    "for",
    "of",
    "into",
    "onto",
    "in",
    "on",
    "at",
    "despite",
    "besides",
    "over",
    "through",
    "until",
    "than",
    "like",
    "about",
    "against",
    "behind",
    "beside",
    "via",
    "by",
    "per",
];

/// Nouns that name a change: `another PR`, `the previous change`.
pub(super) const CHANGE_NOUNS: &[&str] = &["pr", "prs", "pull", "mr", "change", "changes"];

/// Periods after `last` that place an act in the past (`last week`).
pub(super) const PERIODS: &[&str] = &["week", "month", "year", "sprint", "release", "quarter"];

/// The qualifier words of a sentence, each with the noun phrase it belongs to (if any).
pub(super) fn qualifiers(tokens: &[String]) -> Vec<Qualifier> {
    let word = |i: usize| tokens.get(i).map_or("", String::as_str);
    let before = |i: usize| i.checked_sub(1).map_or("", word);
    let phrase_start = |at: usize| {
        let mut start = at;
        while start > 0 && DETERMINERS.contains(&word(start - 1)) {
            start -= 1;
        }
        start
    };
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let t = t.as_str();
        let attributive = DETERMINERS.contains(&before(i)) || PREPOSITIONS.contains(&before(i));
        let possessive = word(i + 1) == "s";
        let (kind, in_phrase) =
            if matches!(t, "another" | "other" | "previous" | "older" | "earlier")
                && CHANGE_NOUNS.contains(&word(i + 1))
            {
                (QualifierKind::OtherChange, true)
            } else if matches!(t, "another" | "someone" | "somebody" | "concurrent") {
                (QualifierKind::External, true)
            } else if matches!(t, "externally" | "concurrently") {
                (QualifierKind::External, false)
            } else if t == "historical" {
                (QualifierKind::Historical, true)
            } else if matches!(t, "earlier" | "yesterday") {
                (QualifierKind::Historical, attributive || possessive)
            } else if t == "last" && PERIODS.contains(&word(i + 1)) {
                (
                    QualifierKind::Historical,
                    DETERMINERS.contains(&before(i)) || word(i + 2) == "s",
                )
            } else if HISTORICAL.contains(&t) {
                (QualifierKind::Historical, false)
            } else {
                continue;
            };
        out.push(Qualifier {
            kind,
            at: i,
            phrase: in_phrase.then(|| phrase_start(i)),
        });
    }
    out
}

/// Whether `q` qualifies the act of the claim found at tokens `first..=last`.
///
/// An adverb qualifies its clause, and a short introductory clause ("Two weeks ago, it
/// was merged") the clause after it. A qualifier inside a noun phrase qualifies the act
/// only when that phrase is in the claim's clause and is its subject (before the claim,
/// with no first-person subject between them), its direct object (right after the
/// claim) or its agent (after `by`): "Another reviewer merged it", "merged another PR",
/// "merged by another agent", but not "I merged it after the earlier CI run".
pub(super) fn qualifies(
    q: &Qualifier,
    tokens: &[String],
    clauses: &[usize],
    first: usize,
    last: usize,
) -> bool {
    let clause = clauses[first];
    let Some(start) = q.phrase else {
        let introductory = clauses[q.at] + 1 == clause
            && clauses.iter().filter(|c| **c == clauses[q.at]).count() <= 4;
        return clauses[q.at] == clause || introductory;
    };
    if clauses[q.at] != clause {
        return false;
    }
    if (first..=last).contains(&q.at) {
        return true;
    }
    if q.at < first {
        return !tokens[q.at + 1..first]
            .iter()
            .any(|t| matches!(t.as_str(), "i" | "we"));
    }
    start == last + 1 || (start > 0 && tokens[start - 1] == "by")
}

/// Pull-request numbers a sentence names: `PR #12`, `PR 12`, `pull request #12`,
/// `MR !12`, `!12`.
pub(super) fn pr_references(sentence: &str) -> Vec<u64> {
    let tokens: Vec<String> = sentence
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '(' | ')' | ';' | ':' | '.'))
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let (glued, raw) = match t.strip_prefix("pr#") {
            Some(rest) => (true, rest),
            None => (false, t.as_str()),
        };
        let Ok(n) = raw.trim_start_matches(['#', '!']).parse::<u64>() else {
            continue;
        };
        let prev = i.checked_sub(1).map(|p| tokens[p].as_str());
        let prev2 = i.checked_sub(2).map(|p| tokens[p].as_str());
        let pr_word = matches!(prev, Some("pr" | "pull" | "mr" | "prs"))
            || (matches!(prev, Some("request")) && matches!(prev2, Some("pull" | "merge")));
        if glued || pr_word || raw.starts_with('!') {
            out.push(n);
        }
    }
    out
}
