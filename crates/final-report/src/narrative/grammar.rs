//! The matching of a sentence against the claim grammar (`phrases.rs`): each match of
//! a phrase becomes a typed [`Claim`] with its subject and qualifiers, decided once
//! here from the sentence's context words (`context.rs`).

use super::claim::{Claim, ClaimKind, Qualifier, Reviewed, Subject};
use super::context::*;
use super::phrases::*;
use super::{Label, words};

/// What one sentence claims: every reading of the phrases it matches (negated,
/// hedged, about someone else or this change's), and, when it matches none, the state
/// word it uses.
pub(super) struct SentenceClaims {
    pub(super) claims: Vec<Claim>,
    pub(super) unmatched_state: Option<String>,
}

/// The claims one sentence makes. `label` is the label of the sentence's line, if any.
/// A phrase asserted once keeps only that reading; a kind asserted by one phrase is not
/// read again by the next.
pub(super) fn claims_in_sentence(
    sentence: &str,
    line: usize,
    label: Option<&Label>,
    reviewed: Reviewed,
) -> SentenceClaims {
    let ctx = Sentence::new(sentence, label, reviewed);
    let mut claims: Vec<Claim> = Vec::new();
    for pattern in PATTERNS {
        if claims
            .iter()
            .any(|c| c.kind == pattern.kind && c.asserted())
        {
            continue;
        }
        let mut readings = Vec::new();
        for (first, last) in find_matches(&ctx.tokens, pattern) {
            let claim = ctx.read_match(pattern, first, last, line);
            if claim.asserted() {
                readings = vec![claim];
                break;
            }
            readings.push(claim);
        }
        claims.extend(readings);
    }
    let unmatched_state = claims
        .is_empty()
        .then(|| unmatched_state(&ctx.tokens))
        .flatten();
    SentenceClaims {
        claims,
        unmatched_state,
    }
}

/// A sentence as its pattern matches are judged: tokens, clauses, context words, the
/// change it names and its line's label.
struct Sentence {
    text: String,
    tokens: Vec<String>,
    /// Clause number of each token: a comma ends the scope of a preceding negation
    /// ("No findings, so I merged it" still claims a merge).
    clauses: Vec<usize>,
    /// The subject a pull-request number in the sentence makes it (anywhere in it).
    named: Option<Subject>,
    simulation: bool,
    context: Vec<ContextWord>,
    /// Tokens of the label part, when this sentence begins with the line's label.
    label_len: Option<usize>,
    label_denied: bool,
}

impl Sentence {
    /// Tokenizes `sentence` and finds what qualifies it.
    fn new(sentence: &str, label: Option<&Label>, reviewed: Reviewed) -> Self {
        let tokens = words(sentence);
        let clauses: Vec<usize> = sentence
            .split([',', ';'])
            .enumerate()
            .flat_map(|(i, part)| std::iter::repeat_n(i, words(part).len()))
            .collect();
        let label_len = label
            .filter(|l| tokens.starts_with(&words(&l.raw)))
            .map(|l| words(&l.raw).len());
        let label_denied = label.is_some_and(|l| {
            words(&l.value)
                .first()
                .is_some_and(|w| NEGATIVE_VALUES.contains(&w.as_str()))
        });
        Sentence {
            text: sentence.trim().to_owned(),
            named: named_change(sentence, reviewed),
            simulation: simulation(&tokens),
            context: context_words(&tokens),
            tokens,
            clauses,
            label_len,
            label_denied,
        }
    }

    /// Whether a negating word precedes the match `first..=last` in its clause or sits
    /// between its words, or the line's label denies it; and whether a hedging word
    /// precedes it in its clause.
    fn negated_and_hedged(&self, pattern: &Pattern, first: usize, last: usize) -> (bool, bool) {
        let tokens = &self.tokens;
        let window = first.saturating_sub(4)..first;
        let before = |list: &[&str]| {
            window.clone().any(|i| {
                self.clauses[i] == self.clauses[first] && list.contains(&tokens[i].as_str())
            })
        };
        let negated_inside = (first..=last).any(|i| {
            let t = tokens[i].as_str();
            !pattern.words.iter().any(|w| matches_word(w, t)) && NEGATORS.contains(&t)
        });
        let in_label = self.label_len.is_some_and(|n| first < n);
        (
            before(NEGATORS) || negated_inside || (in_label && self.label_denied),
            before(HEDGES),
        )
    }

    /// Whom the match `first..=last` of a `kind` claim is about: someone else (an agent
    /// after `by` other than the session, or a context word of its subject, object or
    /// agent), another change (by number, then by words), an unknown one, or this one.
    /// Also whether a context word places it in the past.
    fn subject(&self, kind: ClaimKind, first: usize, last: usize) -> (Subject, bool) {
        let reads = kind.reads();
        let tokens = &self.tokens;
        let by_other = reads.actor
            && tokens.get(last + 1).is_some_and(|t| t == "by")
            && !tokens[last + 2..tokens.len().min(last + 4)]
                .iter()
                .any(|t| SELF_WORDS.contains(&t.as_str()));
        let means = |m: Means| {
            self.context.iter().any(|w| {
                let applies = match w.means {
                    Means::SomeoneElse => reads.actor,
                    Means::Past | Means::OtherChange => reads.change,
                };
                w.means == m && applies && qualifies(w, tokens, &self.clauses, first, last)
            })
        };
        let subject = match self.named.filter(|_| reads.change) {
            _ if by_other || means(Means::SomeoneElse) => Subject::SomeoneElse,
            Some(named @ Subject::OtherChange(_)) => named,
            _ if means(Means::OtherChange) => Subject::OtherChange(None),
            Some(named) => named,
            None => Subject::ThisChange,
        };
        (subject, means(Means::Past))
    }

    /// The claim the match `first..=last` of `pattern` makes, on 0-based `line`.
    fn read_match(&self, pattern: &Pattern, first: usize, last: usize, line: usize) -> Claim {
        let (negated, hedged) = self.negated_and_hedged(pattern, first, last);
        let (subject, past) = self.subject(pattern.kind, first, last);
        let simulated = pattern.kind.reads().simulation && self.simulation;
        let qualifiers = [
            (negated, Qualifier::Negated),
            (hedged, Qualifier::Hedged),
            (past, Qualifier::Past),
            (simulated, Qualifier::Simulated),
        ]
        .into_iter()
        .filter_map(|(on, q)| on.then_some(q))
        .collect();
        Claim {
            kind: pattern.kind,
            subject,
            qualifiers,
            row: pattern.id,
            sentence: self.text.clone(),
            line,
        }
    }
}

/// The first state word of a sentence that matched no pattern; "212 passed, 0 failed"
/// is a count, not an assertion of state.
fn unmatched_state(tokens: &[String]) -> Option<String> {
    tokens
        .iter()
        .enumerate()
        .find(|(i, t)| {
            STATE_WORDS.contains(&t.as_str())
                && !i
                    .checked_sub(1)
                    .is_some_and(|p| tokens[p].chars().all(|c| c.is_ascii_digit()))
        })
        .map(|(_, t)| t.clone())
}

/// Whether a token is a pattern word; `a|b` in a pattern accepts either word.
pub(super) fn matches_word(pattern_word: &str, token: &str) -> bool {
    pattern_word.split('|').any(|w| w == token)
}

/// Every (first, last) token index where the pattern's words occur in order with at
/// most `gap` other words between consecutive ones.
pub(super) fn find_matches(tokens: &[String], pattern: &Pattern) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for start in 0..tokens.len() {
        if !matches_word(pattern.words[0], &tokens[start]) {
            continue;
        }
        let mut at = start;
        let mut ok = true;
        for word in &pattern.words[1..] {
            let next = (at + 1..tokens.len().min(at + 2 + pattern.gap))
                .find(|&i| matches_word(word, &tokens[i]));
            match next {
                Some(i) => at = i,
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            out.push((start, at));
        }
    }
    out
}
