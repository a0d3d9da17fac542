//! The context words that decide whom a claim is about and when: someone else, the
//! past, another change (by words or by the pull-request numbers a sentence names), a
//! simulation.

use super::claim::{Reviewed, Subject};

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

/// The subject a sentence's pull-request numbers give it (anywhere in the sentence):
/// another change when it names one but not the reviewed pull request, an unknown one
/// when the report names no reviewed pull request, none when it names the reviewed
/// one or no number.
pub(super) fn named_change(sentence: &str, reviewed: Reviewed) -> Option<Subject> {
    let refs = pr_references(sentence);
    let first = refs.first().copied()?;
    match reviewed.pull_request {
        Some(own) if refs.contains(&own) => None,
        Some(_) => Some(Subject::OtherChange(Some(first))),
        None => Some(Subject::Unknown(first)),
    }
}

/// Whether a sentence describes a simulation (its words anywhere, or `test-merge(d)`).
pub(super) fn simulation(tokens: &[String]) -> bool {
    tokens.iter().any(|t| SIMULATION.contains(&t.as_str()))
        || tokens
            .windows(2)
            .any(|w| w[0] == "test" && (w[1] == "merged" || w[1] == "merge"))
}

/// What a context word says about the act it qualifies: its subject
/// ([`Subject::SomeoneElse`], [`Subject::OtherChange`]) or its time
/// ([`Qualifier::Past`](super::claim::Qualifier::Past)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Means {
    /// Someone else did it (`another reviewer`, `someone`, `externally`).
    SomeoneElse,
    /// It happened before this session (`earlier`, `two weeks ago`, `last week`).
    Past,
    /// It is about another change (`another PR`, `the previous change`).
    OtherChange,
}

/// One context word of a sentence.
#[derive(Debug, Clone, Copy)]
pub(super) struct ContextWord {
    pub(super) means: Means,
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

/// The context words of a sentence, each with the noun phrase it belongs to (if any).
pub(super) fn context_words(tokens: &[String]) -> Vec<ContextWord> {
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
        let (means, in_phrase) =
            if matches!(t, "another" | "other" | "previous" | "older" | "earlier")
                && CHANGE_NOUNS.contains(&word(i + 1))
            {
                (Means::OtherChange, true)
            } else if matches!(t, "another" | "someone" | "somebody" | "concurrent") {
                (Means::SomeoneElse, true)
            } else if matches!(t, "externally" | "concurrently") {
                (Means::SomeoneElse, false)
            } else if t == "historical" {
                (Means::Past, true)
            } else if matches!(t, "earlier" | "yesterday") {
                (Means::Past, attributive || possessive)
            } else if t == "last" && PERIODS.contains(&word(i + 1)) {
                (
                    Means::Past,
                    DETERMINERS.contains(&before(i)) || word(i + 2) == "s",
                )
            } else if HISTORICAL.contains(&t) {
                (Means::Past, false)
            } else {
                continue;
            };
        out.push(ContextWord {
            means,
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
    q: &ContextWord,
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
