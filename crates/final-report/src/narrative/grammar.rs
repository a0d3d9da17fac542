//! The claim grammar: one table row per claim phrase (the claim, its words in order,
//! the words allowed between them), the negating and hedging words, and the matching
//! of a sentence against the table.

use super::*;

pub(super) struct Pattern {
    pub(super) claim: Claim,
    /// The words in order; `a|b` accepts either word.
    pub(super) words: &'static [&'static str],
    /// Most other words allowed between two consecutive pattern words.
    pub(super) gap: usize,
}

pub(super) const fn p(claim: Claim, words: &'static [&'static str], gap: usize) -> Pattern {
    Pattern { claim, words, gap }
}

/// Words naming the target branch in a merge phrase (`pushed it to origin/main`).
pub(super) const TARGET: &str = "main|master|trunk|target";
/// A target branch, or the direction word of a merge (`fast-forwarded into ...`).
pub(super) const TARGET_OR_INTO: &str = "main|master|trunk|target|into|onto";

pub(super) const PATTERNS: &[Pattern] = &[
    p(Claim::Merged, &["merged"], 0),
    p(Claim::Merged, &["merge", "succeeded"], 1),
    p(Claim::Merged, &["merge", "completed"], 1),
    // A push or fast-forward of the target branch is a merge.
    p(Claim::Merged, &["pushed", "to|into|onto", TARGET], 2),
    p(Claim::Merged, &["fast", "forwarded", TARGET_OR_INTO], 1),
    p(Claim::Merged, &[TARGET, "fast", "forwarded"], 2),
    p(Claim::Approved, &["approved"], 0),
    p(Claim::Approved, &["approval", "submitted"], 2),
    p(Claim::ReadyState, &["ready", "merge"], 2),
    p(Claim::ReadyState, &["ready", "merged"], 2),
    p(Claim::ReadyState, &["ready", "merging"], 2),
    p(Claim::ReadyState, &["ready", "approve"], 2),
    p(Claim::ReadyState, &["ready", "approval"], 2),
    p(Claim::ReadyState, &["ready", "land"], 2),
    p(Claim::ReadyState, &["ready", "ship"], 2),
    p(Claim::ReadyState, &["safe", "land"], 1),
    p(Claim::ReadyState, &["safe", "merge"], 1),
    p(Claim::ReadyState, &["good", "merge"], 1),
    p(Claim::ReadyState, &["ok", "merge"], 1),
    p(Claim::ReadyState, &["okay", "merge"], 1),
    p(Claim::ReadyState, &["fine", "merge"], 1),
    p(Claim::ReadyState, &["clear", "merge"], 1),
    p(Claim::ReadyState, &["cleared", "merge"], 2),
    p(Claim::ReadyState, &["can", "merged"], 2),
    p(Claim::ReadyState, &["mergeable"], 0),
    p(Claim::ReadyState, &["merge", "ready"], 0),
    p(Claim::ReadyState, &["good", "go"], 1),
    p(Claim::ReadyState, &["nothing", "blocks"], 0),
    p(Claim::ReadyState, &["can", "landed"], 2),
    p(Claim::ReadyState, &["ship", "it"], 0),
    p(Claim::ReadyState, &["lgtm"], 0),
    p(Claim::FullSuitePassed, &["full", "suite", "passed"], 2),
    p(Claim::FullSuitePassed, &["full", "suite", "green"], 2),
    p(Claim::FullSuitePassed, &["entire", "suite", "passed"], 2),
    p(Claim::FullSuitePassed, &["all", "tests", "passed"], 2),
    p(Claim::FullSuitePassed, &["all", "tests", "pass"], 2),
    p(Claim::FullSuitePassed, &["all", "checks", "passed"], 2),
    p(Claim::FullSuitePassed, &["all", "checks", "succeeded"], 2),
    p(Claim::FullSuitePassed, &["all", "checks", "green"], 2),
    p(Claim::FullSuitePassed, &["tests", "green"], 1),
    p(Claim::FullSuitePassed, &["suite", "green"], 1),
    p(Claim::FullSuitePassed, &["ci", "green"], 1),
    p(Claim::FullSuitePassed, &["everything", "passed"], 1),
    p(Claim::FullSuitePassed, &["everything", "green"], 1),
    p(Claim::FullSuitePassed, &["all", "green"], 1),
    p(Claim::FullSuitePassed, &["checks", "green"], 1),
    p(Claim::FullSuitePassed, &["validation", "pass"], 0),
    p(Claim::FullSuitePassed, &["tests", "pass"], 0),
    p(
        Claim::FullSuitePassed,
        &[
            "tests|suite|checks|ci|everything|validation",
            "passing|passes",
        ],
        1,
    ),
    p(Claim::FullSuitePassed, &["validation", "passed"], 1),
    p(Claim::IssueClosed, &["issue", "closed"], 3),
    p(Claim::IssueClosed, &["issues", "closed"], 3),
    p(Claim::IssueClosed, &["closed", "issue"], 2),
    p(Claim::IssueClosed, &["closed", "issues"], 2),
    p(Claim::InventoryComplete, &["inventory", "complete"], 2),
    p(Claim::InventoryComplete, &["complete", "inventory"], 1),
    p(Claim::FailurePreExisting, &["pre", "existing"], 0),
    p(Claim::FailurePreExisting, &["preexisting"], 0),
    p(Claim::FailurePreExisting, &["same", "as", "master"], 0),
    p(Claim::FailurePreExisting, &["same", "as", "main"], 0),
    p(Claim::FailurePreExisting, &["also", "fails", "on"], 0),
    p(
        Claim::IsolatedWorktreeOnly,
        &["validation", "isolated", "worktree"],
        4,
    ),
    p(
        Claim::IsolatedWorktreeOnly,
        &["tests", "isolated", "worktree"],
        4,
    ),
    p(
        Claim::IsolatedWorktreeOnly,
        &["isolated", "worktree", "only"],
        1,
    ),
    p(Claim::StrictCompliance, &["strict", "compliance"], 0),
    p(Claim::StrictCompliance, &["strictly", "compliant"], 0),
    p(Claim::StrictCompliance, &["fully", "compliant"], 0),
    p(Claim::BlockedOrStopped, &["blocked"], 0),
    p(Claim::BlockedOrStopped, &["stopped"], 0),
    p(Claim::BlockedOrStopped, &["failed", "closed"], 0),
    p(Claim::BlockedOrStopped, &["fail", "closed"], 0),
];

/// Words that negate a claim anywhere before it in its sentence window or between its
/// words. `t` is the tail of contractions like "wasn't" after tokenisation.
pub(super) const NEGATORS: &[&str] = &[
    "not", "no", "never", "without", "t", "nor", "neither", "cannot", "unable", "refused",
    "nothing", "nobody", "none", "didn", "wasn", "isn", "hasn", "haven", "won", "wouldn", "couldn",
    "shouldn",
];

/// Words that hedge a claim when they precede it ("will be merged", "ready to be merged").
pub(super) const HEDGES: &[&str] = &[
    "would", "will", "should", "could", "can", "may", "might", "if", "once", "until", "unless",
    "before", "when", "whether", "ready", "be", "to", "pending", "awaiting", "await",
];

/// Words after "by" that keep a merge or approval the session's own.
pub(super) const SELF_WORDS: &[&str] = &[
    "me",
    "us",
    "this",
    "vouch",
    "myself",
    "ourselves",
    "session",
];

/// Label values that deny the label (`Merged: no`).
pub(super) const NEGATIVE_VALUES: &[&str] = &[
    "no",
    "false",
    "none",
    "not",
    "n",
    "na",
    "never",
    "unproven",
    "pending",
    "skipped",
    "incomplete",
    "unknown",
    "unverified",
    "partial",
    "blocked",
];

/// What one sentence claims, and why it was set aside when it asserts state that is not
/// this change's.
pub(super) struct SentenceClaims {
    pub(super) claims: Vec<Claim>,
    pub(super) unrelated: Option<String>,
}

/// The claims one sentence makes. `label` is the label of the sentence's line, if any.
pub(super) fn claims_in_sentence(
    sentence: &str,
    label: Option<&Label>,
    subject: Subject,
) -> SentenceClaims {
    let ctx = Sentence::new(sentence, label, subject);
    let mut claims = Vec::new();
    let mut any_match = false;
    let mut set_aside: Option<String> = None;
    for pattern in PATTERNS {
        if claims.contains(&pattern.claim) {
            continue;
        }
        let matches = find_matches(&ctx.tokens, pattern);
        any_match |= !matches.is_empty();
        match ctx.judge(pattern, matches) {
            Ok(()) => claims.push(pattern.claim),
            Err(Some(r)) => {
                set_aside.get_or_insert(r);
            }
            Err(None) => {}
        }
    }
    let unrelated = set_aside
        .map(|r| format!("not read as a claim about this change: {r}"))
        .or_else(|| {
            if any_match {
                return None;
            }
            unmatched_state(&ctx.tokens)
        });
    SentenceClaims { claims, unrelated }
}

/// A sentence as its pattern matches are judged: tokens, clauses, qualifiers, the
/// other change it names and its line's label.
struct Sentence {
    tokens: Vec<String>,
    /// Clause number of each token: a comma ends the scope of a preceding negation
    /// ("No findings, so I merged it" still claims a merge).
    clauses: Vec<usize>,
    named_other: Option<String>,
    simulation: bool,
    qualifiers: Vec<Qualifier>,
    /// Tokens of the label part, when this sentence begins with the line's label.
    label_len: Option<usize>,
    label_denied: bool,
}

/// How one match of a pattern reads.
enum MatchReading {
    /// Negated or hedged, or under a label whose value denies it: no claim.
    Denied,
    /// About something other than this change, for this reason.
    SetAside(String),
    /// A claim about this change.
    Claimed,
}

impl Sentence {
    /// Tokenizes `sentence` and finds what qualifies it.
    fn new(sentence: &str, label: Option<&Label>, subject: Subject) -> Self {
        let tokens = words(sentence);
        let clauses: Vec<usize> = sentence
            .split([',', ';'])
            .enumerate()
            .flat_map(|(i, part)| std::iter::repeat_n(i, words(part).len()))
            .collect();
        let (named_other, simulation) = other_change(sentence, &tokens, subject);
        let qualifiers = qualifiers(&tokens);
        let label_len = label
            .filter(|l| words(sentence).starts_with(&words(&l.raw)))
            .map(|l| words(&l.raw).len());
        let label_denied = label.is_some_and(|l| {
            words(&l.value)
                .first()
                .is_some_and(|w| NEGATIVE_VALUES.contains(&w.as_str()))
        });
        Sentence {
            tokens,
            clauses,
            named_other,
            simulation,
            qualifiers,
            label_len,
            label_denied,
        }
    }

    /// Whether `pattern` is claimed (`Ok`) through one of its `matches`; otherwise the
    /// first reason a match was set aside, if any.
    fn judge(&self, pattern: &Pattern, matches: Vec<(usize, usize)>) -> Result<(), Option<String>> {
        let mut first_reason = None;
        for (first, last) in matches {
            match self.read_match(pattern, first, last) {
                MatchReading::Denied => {}
                MatchReading::SetAside(r) => {
                    first_reason.get_or_insert(r);
                }
                MatchReading::Claimed => return Ok(()),
            }
        }
        Err(first_reason)
    }

    /// Whether the match `first..=last` is negated or hedged in its clause, or denied by
    /// the line's label.
    fn denied(&self, pattern: &Pattern, first: usize, last: usize) -> bool {
        let tokens = &self.tokens;
        let in_label = self.label_len.is_some_and(|n| first < n);
        let hedged = (first.saturating_sub(4)..first).any(|i| {
            let t = tokens[i].as_str();
            self.clauses[i] == self.clauses[first] && (NEGATORS.contains(&t) || HEDGES.contains(&t))
        });
        let negated_inside = (first..=last).any(|i| {
            let t = tokens[i].as_str();
            !pattern.words.iter().any(|w| matches_word(w, t)) && NEGATORS.contains(&t)
        });
        hedged || negated_inside || (in_label && self.label_denied)
    }

    /// How the match `first..=last` of `pattern` reads: denied, set aside as about
    /// someone or something else, or claimed.
    fn read_match(&self, pattern: &Pattern, first: usize, last: usize) -> MatchReading {
        if self.denied(pattern, first, last) {
            return MatchReading::Denied;
        }
        let tokens = &self.tokens;
        let about_change = matches!(
            pattern.claim,
            Claim::Merged | Claim::Approved | Claim::ReadyState
        );
        let acts = matches!(pattern.claim, Claim::Merged | Claim::Approved);
        // "approved by @alice" attributes the act to someone else.
        let by_other = acts
            && tokens.get(last + 1).is_some_and(|t| t == "by")
            && !tokens[last + 2..tokens.len().min(last + 4)]
                .iter()
                .any(|t| SELF_WORDS.contains(&t.as_str()));
        let qualified = self.qualifiers.iter().find(|q| {
            let applies = match q.kind {
                QualifierKind::External => acts,
                QualifierKind::Historical | QualifierKind::OtherChange => about_change,
            };
            applies && qualifies(q, tokens, &self.clauses, first, last)
        });
        let reason = if by_other {
            Some(QualifierKind::External.reason().to_owned())
        } else if let Some(q) = qualified {
            Some(q.kind.reason().to_owned())
        } else if about_change && self.named_other.is_some() {
            self.named_other.clone()
        } else if pattern.claim == Claim::Merged && self.simulation {
            Some("it describes a merge simulation, not a merge of the pull request".to_owned())
        } else {
            None
        };
        reason.map_or(MatchReading::Claimed, MatchReading::SetAside)
    }
}

/// A state word in a sentence that matched no pattern; "212 passed, 0 failed" is a
/// count, not an assertion of state.
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
        .map(|(_, t)| t)
        .map(|w| format!("asserts state (`{w}`) but matches no claim of the grammar, so it is not checked against the handoff"))
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
