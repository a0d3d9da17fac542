//! What the narrative claims, read without a model: labelled lines (`Label: value`,
//! Markdown list items, bold labels, table rows) and a closed list of claim phrases.
//!
//! A phrase matches when its words appear in order in one sentence, with at most a few
//! other words between them. A match is discarded when a negating or hedging word
//! (`not`, `never`, `without`, `would`, `ready to be`, ...) precedes it in the same
//! sentence or sits between its words, or when it is the label of a line whose value is
//! negative (`Merged: no`). A merge or approval phrase whose act is attributed to
//! someone else (`another reviewer merged`, `approved by @alice`, `externally`), placed
//! in the past (`earlier`, `two weeks ago`) or about another change (`another PR`) is
//! not a claim of this session. A qualifier word qualifies only its own clause, and
//! inside a noun phrase only when that phrase is the act's subject, object or agent:
//! "I merged it after the earlier CI run" is still a merge claim.

/// A claim the narrative can make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Claim {
    Merged,
    Approved,
    ReadyState,
    FullSuitePassed,
    IssueClosed,
    InventoryComplete,
    FailurePreExisting,
    IsolatedWorktreeOnly,
    StrictCompliance,
    BlockedOrStopped,
}

struct Pattern {
    claim: Claim,
    /// The words in order; `a|b` accepts either word.
    words: &'static [&'static str],
    /// Most other words allowed between two consecutive pattern words.
    gap: usize,
}

const fn p(claim: Claim, words: &'static [&'static str], gap: usize) -> Pattern {
    Pattern { claim, words, gap }
}

/// Words naming the target branch in a merge phrase (`pushed it to origin/main`).
const TARGET: &str = "main|master|trunk|target";
/// A target branch, or the direction word of a merge (`fast-forwarded into ...`).
const TARGET_OR_INTO: &str = "main|master|trunk|target|into|onto";

const PATTERNS: &[Pattern] = &[
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
const NEGATORS: &[&str] = &[
    "not", "no", "never", "without", "t", "nor", "neither", "cannot", "unable", "refused",
    "nothing", "nobody", "none", "didn", "wasn", "isn", "hasn", "haven", "won", "wouldn", "couldn",
    "shouldn",
];

/// Words that hedge a claim when they precede it ("will be merged", "ready to be merged").
const HEDGES: &[&str] = &[
    "would", "will", "should", "could", "can", "may", "might", "if", "once", "until", "unless",
    "before", "when", "whether", "ready", "be", "to", "pending", "awaiting", "await",
];

/// Words after "by" that keep a merge or approval the session's own.
const SELF_WORDS: &[&str] = &[
    "me",
    "us",
    "this",
    "vouch",
    "myself",
    "ourselves",
    "session",
];

/// Label values that deny the label (`Merged: no`).
const NEGATIVE_VALUES: &[&str] = &[
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

/// Lower-case alphanumeric words of a text.
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// A `Label: value` line of the narrative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Label {
    /// Lower-case label words joined by single spaces, e.g. `files reviewed`.
    pub name: String,
    /// The label after Unicode normalisation (see `unicode::skeleton`).
    pub raw: String,
    /// The label exactly as written.
    pub original: String,
    /// The value, decorations stripped.
    pub value: String,
    /// 0-based line index.
    pub line: usize,
}

/// One claim found in the narrative, with the sentence it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClaimHit {
    pub claim: Claim,
    pub sentence: String,
}

/// The narrative, analysed once per validation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Narrative {
    lines: Vec<String>,
    labels: Vec<Label>,
    hits: Vec<ClaimHit>,
    unrelated: Vec<Unrelated>,
}

/// A sentence that asserts state but is not checked against the handoff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unrelated {
    /// 0-based line.
    pub line: usize,
    pub sentence: String,
    pub reason: String,
}

/// What the narrative is about: the reviewed pull request's number, when there is one.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Subject {
    pub pull_request: Option<u64>,
}

impl Narrative {
    pub(crate) fn parse(text: &str) -> Self {
        Self::parse_about(text, Subject::default())
    }

    /// Parse a narrative about `subject`: merge and approval claims about another
    /// pull request, a historical merge or a merge simulation are set aside.
    pub(crate) fn parse_about(text: &str, subject: Subject) -> Self {
        let originals: Vec<&str> = text.lines().collect();
        let lines: Vec<String> = originals
            .iter()
            .map(|l| crate::unicode::skeleton(l))
            .collect();
        let labels: Vec<Label> = lines
            .iter()
            .enumerate()
            .filter_map(|(i, line)| {
                parse_label(line, i).map(|mut l| {
                    l.original = label_part(originals[i]).unwrap_or(&l.raw).to_owned();
                    l
                })
            })
            .collect();
        let mut hits = Vec::new();
        let mut unrelated = Vec::new();
        for (index, line) in lines.iter().enumerate() {
            let label = labels.iter().find(|l| l.line == index);
            for sentence in sentences(line) {
                let found = claims_in_sentence(sentence, label, subject);
                for claim in &found.claims {
                    hits.push(ClaimHit {
                        claim: *claim,
                        sentence: sentence.trim().to_owned(),
                    });
                }
                if let Some(reason) = found.unrelated {
                    unrelated.push(Unrelated {
                        line: index,
                        sentence: sentence.trim().to_owned(),
                        reason,
                    });
                }
            }
        }
        Self {
            lines,
            labels,
            hits,
            unrelated,
        }
    }

    /// Sentences that assert state but are not related to the handoff.
    pub(crate) fn unrelated(&self) -> &[Unrelated] {
        &self.unrelated
    }

    /// The first sentence making `claim`, if any.
    pub(crate) fn claim(&self, claim: Claim) -> Option<&ClaimHit> {
        self.hits.iter().find(|h| h.claim == claim)
    }

    pub(crate) fn labels(&self) -> &[Label] {
        &self.labels
    }

    /// The first label whose normalised name is one of `names`.
    pub(crate) fn label(&self, names: &[&str]) -> Option<&Label> {
        self.labels
            .iter()
            .find(|l| names.contains(&l.name.as_str()))
    }

    /// The files named under a `Files reviewed:` label: an inline comma list, a bare
    /// count, or the list items directly below the label.
    pub(crate) fn files_reviewed(&self) -> Option<FilesClaim> {
        let label = self.label(&["files reviewed", "reviewed files"])?;
        let value = label.value.trim();
        if !value.is_empty() {
            if let Ok(count) = value.parse::<usize>() {
                return Some(FilesClaim::Count(count));
            }
            let items = value
                .split(',')
                .map(clean_item)
                .filter(|s| !s.is_empty())
                .collect();
            return Some(FilesClaim::List(items));
        }
        let mut items = Vec::new();
        for line in self.lines.iter().skip(label.line + 1) {
            let trimmed = line.trim();
            if trimmed.is_empty() {
                if items.is_empty() {
                    continue;
                }
                break;
            }
            match strip_list_marker(trimmed) {
                Some(item) => items.push(clean_item(item)),
                None => break,
            }
        }
        Some(FilesClaim::List(items))
    }
}

/// What a `Files reviewed:` label states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FilesClaim {
    List(Vec<String>),
    Count(usize),
}

fn clean_item(item: &str) -> String {
    item.trim()
        .trim_matches(|c: char| c == '`' || c == '"' || c == '\'' || c == '[' || c == ']')
        .trim()
        .to_owned()
}

fn strip_list_marker(line: &str) -> Option<&str> {
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = line.strip_prefix(marker) {
            return Some(rest);
        }
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 {
        let rest = &line[digits..];
        return rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") "));
    }
    None
}

/// Strip block decorations: blockquote, heading marks, list markers.
fn strip_decorations(line: &str) -> &str {
    let mut s = line.trim();
    loop {
        let before = s;
        s = s.trim_start_matches('>').trim_start();
        s = s.trim_start_matches('#').trim_start();
        if let Some(rest) = strip_list_marker(s) {
            s = rest.trim_start();
        }
        if s == before {
            return s;
        }
    }
}

fn strip_emphasis(text: &str) -> &str {
    text.trim()
        .trim_matches(|c: char| c == '*' || c == '_' || c == '`')
        .trim()
}

/// Parse `Label: value`, `**Label:** value` or `| Label | value |`.
fn parse_label(line: &str, index: usize) -> Option<Label> {
    let s = strip_decorations(line);
    let (raw_name, value) = if let Some(row) = s.strip_prefix('|') {
        let mut cells = row.split('|').map(str::trim);
        let name = cells.next()?;
        (name, cells.next().unwrap_or(""))
    } else {
        let colon = s.find(':')?;
        (&s[..colon], &s[colon + 1..])
    };
    let raw = strip_emphasis(raw_name);
    if value.starts_with("//") {
        return None;
    }
    let valid = raw.len() <= 48
        && raw.chars().next().is_some_and(char::is_alphabetic)
        && raw
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, ' ' | '/' | '-' | '(' | ')' | '_'));
    if !valid {
        return None;
    }
    Some(Label {
        name: words(raw).join(" "),
        raw: raw.to_owned(),
        original: raw.to_owned(),
        value: strip_emphasis(value).to_owned(),
        line: index,
    })
}

/// The label part of a line as written (before normalisation), without checks.
fn label_part(line: &str) -> Option<&str> {
    let s = strip_decorations(line);
    let raw = if let Some(row) = s.strip_prefix('|') {
        row.split('|').next()?
    } else {
        &s[..s.find(':')?]
    };
    Some(strip_emphasis(raw))
}

/// Split a line into sentences at `.`, `!` or `?` followed by whitespace. A `;` joins two
/// clauses of one sentence (so "simulated and aborted; it merged cleanly" is one
/// sentence about the simulation), and ends a negation's scope like a comma.
fn sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let ends = matches!(b, b'.' | b'!' | b'?')
            && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace());
        if ends {
            out.push(&line[start..=i]);
            start = i + 1;
        }
    }
    if start < line.len() {
        out.push(&line[start..]);
    }
    out
}

/// What one sentence claims, and why it was set aside when it asserts state that is not
/// this change's.
struct SentenceClaims {
    claims: Vec<Claim>,
    unrelated: Option<String>,
}

/// Words that place a merge in the past, before this session.
const HISTORICAL: &[&str] = &[
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
const SIMULATION: &[&str] = &[
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
const STATE_WORDS: &[&str] = &[
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
fn other_change(sentence: &str, tokens: &[String], subject: Subject) -> (Option<String>, bool) {
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
enum QualifierKind {
    /// Someone else did it (`another reviewer`, `someone`, `externally`).
    External,
    /// It happened before this session (`earlier`, `two weeks ago`, `last week`).
    Historical,
    /// It is about another change (`another PR`, `the previous change`).
    OtherChange,
}

impl QualifierKind {
    fn reason(self) -> &'static str {
        match self {
            Self::External => "it attributes the act to someone else",
            Self::Historical => "it describes an earlier, historical merge",
            Self::OtherChange => "it is about another pull request",
        }
    }
}

/// One qualifier word of a sentence.
#[derive(Debug, Clone, Copy)]
struct Qualifier {
    kind: QualifierKind,
    /// Token index of the qualifier word.
    at: usize,
    /// For a qualifier inside a noun phrase (`the earlier CI run`, `another reviewer`,
    /// `yesterday's release`), the token index where that noun phrase starts (its
    /// determiner included). `None` for an adverb, which qualifies its whole clause.
    phrase: Option<usize>,
}

/// Determiners and possessives that open a noun phrase.
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "its", "our", "their", "my", "his", "her",
    "your",
];

/// Prepositions and subordinators that put the noun phrase after them outside the
/// act's subject and object ("merged it after the earlier CI run").
const PREPOSITIONS: &[&str] = &[
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
const CHANGE_NOUNS: &[&str] = &["pr", "prs", "pull", "mr", "change", "changes"];

/// Periods after `last` that place an act in the past (`last week`).
const PERIODS: &[&str] = &["week", "month", "year", "sprint", "release", "quarter"];

/// The qualifier words of a sentence, each with the noun phrase it belongs to (if any).
fn qualifiers(tokens: &[String]) -> Vec<Qualifier> {
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
fn qualifies(
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
fn pr_references(sentence: &str) -> Vec<u64> {
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

/// The claims one sentence makes. `label` is the label of the sentence's line, if any.
fn claims_in_sentence(sentence: &str, label: Option<&Label>, subject: Subject) -> SentenceClaims {
    let tokens = words(sentence);
    // Clause number of each token: a comma ends the scope of a preceding negation
    // ("No findings, so I merged it" still claims a merge).
    let clauses: Vec<usize> = sentence
        .split([',', ';'])
        .enumerate()
        .flat_map(|(i, part)| std::iter::repeat_n(i, words(part).len()))
        .collect();
    let (named_other, simulation) = other_change(sentence, &tokens, subject);
    let qualifiers = qualifiers(&tokens);
    // Tokens of the label part, when this sentence begins with the line's label.
    let label_len = label
        .filter(|l| words(sentence).starts_with(&words(&l.raw)))
        .map(|l| words(&l.raw).len());
    let label_denied = label.is_some_and(|l| {
        words(&l.value)
            .first()
            .is_some_and(|w| NEGATIVE_VALUES.contains(&w.as_str()))
    });
    let mut claims = Vec::new();
    let mut any_match = false;
    let mut set_aside: Option<String> = None;
    for pattern in PATTERNS {
        if claims.contains(&pattern.claim) {
            continue;
        }
        let matches = find_matches(&tokens, pattern);
        any_match |= !matches.is_empty();
        let about_change = matches!(
            pattern.claim,
            Claim::Merged | Claim::Approved | Claim::ReadyState
        );
        let acts = matches!(pattern.claim, Claim::Merged | Claim::Approved);
        let mut reasons = Vec::new();
        let mut claimed = false;
        for (first, last) in matches {
            let in_label = label_len.is_some_and(|n| first < n);
            let before = first.saturating_sub(4)..first;
            let hedged = before.clone().any(|i| {
                let t = tokens[i].as_str();
                clauses[i] == clauses[first] && (NEGATORS.contains(&t) || HEDGES.contains(&t))
            });
            let negated_inside = (first..=last).any(|i| {
                let t = tokens[i].as_str();
                !pattern.words.iter().any(|w| matches_word(w, t)) && NEGATORS.contains(&t)
            });
            if hedged || negated_inside || (in_label && label_denied) {
                continue;
            }
            // "approved by @alice" attributes the act to someone else.
            let by_other = acts
                && tokens.get(last + 1).is_some_and(|t| t == "by")
                && !tokens[last + 2..tokens.len().min(last + 4)]
                    .iter()
                    .any(|t| SELF_WORDS.contains(&t.as_str()));
            let qualified = qualifiers.iter().find(|q| {
                let applies = match q.kind {
                    QualifierKind::External => acts,
                    QualifierKind::Historical | QualifierKind::OtherChange => about_change,
                };
                applies && qualifies(q, &tokens, &clauses, first, last)
            });
            let reason = if by_other {
                Some(QualifierKind::External.reason().to_owned())
            } else if let Some(q) = qualified {
                Some(q.kind.reason().to_owned())
            } else if about_change && named_other.is_some() {
                named_other.clone()
            } else if pattern.claim == Claim::Merged && simulation {
                Some("it describes a merge simulation, not a merge of the pull request".to_owned())
            } else {
                None
            };
            match reason {
                Some(r) => reasons.push(r),
                None => {
                    claimed = true;
                    break;
                }
            }
        }
        if claimed {
            claims.push(pattern.claim);
        } else if let Some(r) = reasons.into_iter().next() {
            set_aside.get_or_insert(r);
        }
    }
    let unrelated = set_aside
        .map(|r| format!("not read as a claim about this change: {r}"))
        .or_else(|| {
            if any_match {
                return None;
            }
            // "212 passed, 0 failed" is a count, not an assertion of state.
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
        });
    SentenceClaims { claims, unrelated }
}

/// Whether a token is a pattern word; `a|b` in a pattern accepts either word.
fn matches_word(pattern_word: &str, token: &str) -> bool {
    pattern_word.split('|').any(|w| w == token)
}

/// Every (first, last) token index where the pattern's words occur in order with at
/// most `gap` other words between consecutive ones.
fn find_matches(tokens: &[String], pattern: &Pattern) -> Vec<(usize, usize)> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(text: &str) -> Vec<Claim> {
        let n = Narrative::parse(text);
        let mut out: Vec<Claim> = n.hits.iter().map(|h| h.claim).collect();
        out.dedup();
        out
    }

    #[test]
    fn claim_phrases_are_found_and_negations_dropped() {
        use Claim::*;
        let table: &[(&str, &[Claim])] = &[
            ("PR #4 was merged into main.", &[Merged]),
            ("PR #4 was not merged.", &[]),
            ("No review was submitted, nothing was merged.", &[]),
            ("No findings, so I merged the branch.", &[Merged]),
            ("It wasn't merged.", &[]),
            ("It is ready to be merged.", &[ReadyState]),
            ("It will be merged by the controller.", &[]),
            ("Another reviewer approved and merged it concurrently.", &[]),
            (
                "It was approved by @alice; merged by this session.",
                &[Merged],
            ),
            ("I approved the pull request.", &[Approved]),
            ("The review is PENDING, never APPROVED.", &[]),
            ("The full test suite passed.", &[FullSuitePassed]),
            ("Not all tests passed.", &[]),
            ("All 120 tests passed.", &[FullSuitePassed]),
            ("Issue #12 is now closed.", &[IssueClosed]),
            ("Issue #12 was not closed.", &[]),
            ("The inventory is complete.", &[InventoryComplete]),
            (
                "The failure is pre-existing on main.",
                &[FailurePreExisting],
            ),
            ("Same as master.", &[FailurePreExisting]),
            (
                "All validation ran in an isolated worktree.",
                &[IsolatedWorktreeOnly],
            ),
            ("Strict compliance with the policy.", &[StrictCompliance]),
            (
                "The session stopped and failed closed.",
                &[BlockedOrStopped],
            ),
            ("The merge is not blocked.", &[]),
            ("Nothing to see; ready to merge", &[ReadyState]),
            ("Not ready to merge.", &[]),
            ("Safe to merge.", &[ReadyState]),
            ("Good to merge.", &[ReadyState]),
            ("This can be merged now.", &[ReadyState]),
            ("Mergeable.", &[ReadyState]),
            ("Ready to land.", &[ReadyState]),
            ("Not safe to merge.", &[]),
            ("It cannot be merged yet.", &[]),
            ("This PR is merge-ready.", &[ReadyState]),
            ("The change is good to go.", &[ReadyState]),
            ("Nothing blocks merging this PR.", &[ReadyState]),
            ("This PR can now be landed.", &[ReadyState]),
            ("LGTM, ship it.", &[ReadyState]),
            ("It is not good to go.", &[]),
            (
                "Everything is green, approved.",
                &[Approved, FullSuitePassed],
            ),
            ("Validation: PASS", &[FullSuitePassed]),
            ("PR #12 was merged last week.", &[]),
            (
                "I test-merged origin/main into a scratch branch and aborted it.",
                &[],
            ),
        ];
        for (text, expected) in table {
            assert_eq!(claims(text), *expected, "{text}");
        }
    }

    #[test]
    fn claims_about_other_changes_are_set_aside_with_a_reason() {
        let subject = Subject {
            pull_request: Some(42),
        };
        let table: &[(&str, &[Claim], bool)] = &[
            ("Merged PR #42 into main.", &[Claim::Merged], false),
            ("PR #12, which was merged last week, broke this.", &[], true),
            ("It was introduced by PR 9, merged in March.", &[], true),
            ("The same module was merged two weeks ago.", &[], true),
            ("I test-merged origin/main and aborted it.", &[], true),
            // Set aside, and so reported (docs: attributed acts are warnings).
            ("Merged by another agent.", &[], true),
            ("The change landed.", &[], true),
            ("212 passed, 0 failed.", &[], false),
            ("Nothing was merged.", &[], false),
        ];
        for (text, expected, warned) in table {
            let n = Narrative::parse_about(text, subject);
            let got: Vec<Claim> = n.hits.iter().map(|h| h.claim).collect();
            assert_eq!(got, *expected, "{text}");
            assert_eq!(
                !n.unrelated().is_empty(),
                *warned,
                "{text}: {:?}",
                n.unrelated()
            );
        }
    }

    #[test]
    fn qualifiers_qualify_only_their_clause_and_noun_phrase() {
        let subject = Subject {
            pull_request: Some(42),
        };
        // (sentence, claims, warned)
        let table: &[(&str, &[Claim], bool)] = &[
            // A qualifier inside a prepositional phrase after the verb, or in another
            // clause, leaves a first-person claim a claim.
            (
                "I merged it into main after the earlier CI run.",
                &[Claim::Merged],
                false,
            ),
            (
                "Another look was not needed, so I merged it.",
                &[Claim::Merged],
                false,
            ),
            ("After another review I merged it.", &[Claim::Merged], false),
            (
                "I merged it after the earlier PR was merged.",
                &[Claim::Merged],
                false,
            ),
            (
                "I approved it yesterday's way: approved.",
                &[Claim::Approved],
                false,
            ),
            // A qualifier of the subject, the object, the agent or the whole clause
            // still sets the claim aside.
            ("Another reviewer merged an earlier PR.", &[], true),
            ("I merged another PR first.", &[], true),
            ("Merged by another agent.", &[], true),
            ("Someone merged it while I was reviewing.", &[], true),
            ("It was merged earlier.", &[], true),
            ("Two weeks ago, it was merged.", &[], true),
            (
                "Yesterday's release was merged from the release branch.",
                &[],
                true,
            ),
            ("The earlier change was merged last week.", &[], true),
            (
                "I approved it after another reviewer merged it.",
                &[Claim::Approved],
                true,
            ),
        ];
        for (text, expected, warned) in table {
            let n = Narrative::parse_about(text, subject);
            let got: Vec<Claim> = n.hits.iter().map(|h| h.claim).collect();
            assert_eq!(got, *expected, "{text}");
            assert_eq!(
                !n.unrelated().is_empty(),
                *warned,
                "{text}: {:?}",
                n.unrelated()
            );
        }
    }

    #[test]
    fn pushes_to_the_target_and_fast_forwards_are_merges() {
        use Claim::*;
        let table: &[(&str, &[Claim])] = &[
            ("I pushed the branch to main directly.", &[Merged]),
            ("It was fast-forwarded into main.", &[Merged]),
            ("I force-pushed it to origin/master.", &[Merged]),
            ("I fast-forwarded main to the PR head.", &[Merged]),
            ("Main was fast-forwarded to c0ffee1.", &[Merged]),
            ("I pushed the fix to the target branch.", &[Merged]),
            ("It can be fast-forwarded into main.", &[]),
            ("Nothing was pushed to main.", &[]),
            ("I did not push to main.", &[]),
            ("I pushed the review notes to the PR branch, not main.", &[]),
            ("I fast-forwarded my worktree to the PR head.", &[]),
            ("Earlier, main was fast-forwarded by the release bot.", &[]),
        ];
        for (text, expected) in table {
            assert_eq!(claims(text), *expected, "{text}");
        }
    }

    #[test]
    fn passing_and_green_phrasings_are_pass_claims() {
        use Claim::*;
        let table: &[(&str, &[Claim])] = &[
            (
                "The test suite is passing; nothing left to do but merge.",
                &[FullSuitePassed],
            ),
            ("All tests are passing.", &[FullSuitePassed]),
            ("The suite passes on the PR head.", &[FullSuitePassed]),
            ("CI is passing.", &[FullSuitePassed]),
            ("All checks are passing.", &[FullSuitePassed]),
            ("Everything is passing.", &[FullSuitePassed]),
            ("All green.", &[FullSuitePassed]),
            ("Tests were not run.", &[]),
            ("The tests are not passing.", &[]),
            ("No tests are passing yet.", &[]),
            ("Once the suite is passing, I will report back.", &[]),
        ];
        for (text, expected) in table {
            assert_eq!(claims(text), *expected, "{text}");
        }
    }

    #[test]
    fn labels_carry_their_value_and_negative_values_deny_the_claim() {
        assert_eq!(claims("- **Merged:** yes"), [Claim::Merged]);
        assert_eq!(claims("- **Merged:** no"), Vec::<Claim>::new());
        assert_eq!(
            claims("Inventory complete: false (INVENTORY_PAGINATION_UNPROVEN)"),
            Vec::<Claim>::new()
        );
        let n = Narrative::parse(
            "# Title\n> **Workspace mutations**: none\n| Scratch worktree used | yes |\nhttp://x: y",
        );
        let names: Vec<&str> = n.labels().iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["workspace mutations", "scratch worktree used"]);
        assert_eq!(n.labels()[0].value, "none");
        assert_eq!(n.labels()[1].value, "yes");
    }

    #[test]
    fn files_reviewed_reads_inline_lists_counts_and_items() {
        let cases: &[(&str, FilesClaim)] = &[
            (
                "Files reviewed: `a.rs`, b/c.rs",
                FilesClaim::List(vec!["a.rs".into(), "b/c.rs".into()]),
            ),
            ("Files reviewed: 3", FilesClaim::Count(3)),
            (
                "**Files reviewed:**\n\n- `a.rs`\n- b.rs\n\nMore prose.",
                FilesClaim::List(vec!["a.rs".into(), "b.rs".into()]),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(
                Narrative::parse(text).files_reviewed().as_ref(),
                Some(expected),
                "{text}"
            );
        }
        assert_eq!(Narrative::parse("no label").files_reviewed(), None);
    }
}
