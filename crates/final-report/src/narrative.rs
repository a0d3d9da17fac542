//! What the narrative claims, read without a model: labelled lines (`Label: value`,
//! Markdown list items, bold labels, table rows) and a closed list of claim phrases.
//!
//! A phrase matches when its words appear in order in one sentence, with at most a few
//! other words between them. A match is discarded when a negating or hedging word
//! (`not`, `never`, `without`, `would`, `ready to be`, ...) precedes it in the same
//! sentence or sits between its words, or when it is the label of a line whose value is
//! negative (`Merged: no`). Merge and approval phrases in a sentence that attributes
//! the act to someone else (`externally`, `another reviewer`, `concurrent`) are not
//! claims of this session.

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
    words: &'static [&'static str],
    /// Most other words allowed between two consecutive pattern words.
    gap: usize,
}

const fn p(claim: Claim, words: &'static [&'static str], gap: usize) -> Pattern {
    Pattern { claim, words, gap }
}

const PATTERNS: &[Pattern] = &[
    p(Claim::Merged, &["merged"], 0),
    p(Claim::Merged, &["merge", "succeeded"], 1),
    p(Claim::Merged, &["merge", "completed"], 1),
    p(Claim::Approved, &["approved"], 0),
    p(Claim::Approved, &["approval", "submitted"], 2),
    p(Claim::ReadyState, &["ready", "merge"], 2),
    p(Claim::ReadyState, &["ready", "merged"], 2),
    p(Claim::ReadyState, &["ready", "merging"], 2),
    p(Claim::ReadyState, &["ready", "approve"], 2),
    p(Claim::ReadyState, &["ready", "approval"], 2),
    p(Claim::FullSuitePassed, &["full", "suite", "passed"], 2),
    p(Claim::FullSuitePassed, &["full", "suite", "green"], 2),
    p(Claim::FullSuitePassed, &["entire", "suite", "passed"], 2),
    p(Claim::FullSuitePassed, &["all", "tests", "passed"], 2),
    p(Claim::FullSuitePassed, &["all", "tests", "pass"], 2),
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

/// Words that attribute a merge or approval to someone other than the session.
const EXTERNAL_MARKERS: &[&str] = &[
    "externally",
    "another",
    "someone",
    "concurrent",
    "concurrently",
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
    /// The label as written.
    pub raw: String,
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
}

impl Narrative {
    pub(crate) fn parse(text: &str) -> Self {
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let labels: Vec<Label> = lines
            .iter()
            .enumerate()
            .filter_map(|(i, line)| parse_label(line, i))
            .collect();
        let mut hits = Vec::new();
        for (index, line) in lines.iter().enumerate() {
            let label = labels.iter().find(|l| l.line == index);
            for sentence in sentences(line) {
                for claim in claims_in_sentence(sentence, label) {
                    hits.push(ClaimHit {
                        claim,
                        sentence: sentence.trim().to_owned(),
                    });
                }
            }
        }
        Self {
            lines,
            labels,
            hits,
        }
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
        value: strip_emphasis(value).to_owned(),
        line: index,
    })
}

/// Split a line into sentences at `.`, `!`, `?` or `;` followed by whitespace.
fn sentences(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let ends = matches!(b, b'.' | b'!' | b'?' | b';')
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

/// The claims one sentence makes. `label` is the label of the sentence's line, if any.
fn claims_in_sentence(sentence: &str, label: Option<&Label>) -> Vec<Claim> {
    let tokens = words(sentence);
    // Clause number of each token: a comma ends the scope of a preceding negation
    // ("No findings, so I merged it" still claims a merge).
    let clauses: Vec<usize> = sentence
        .split(',')
        .enumerate()
        .flat_map(|(i, part)| std::iter::repeat_n(i, words(part).len()))
        .collect();
    let external = tokens
        .iter()
        .any(|t| EXTERNAL_MARKERS.contains(&t.as_str()));
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
    for pattern in PATTERNS {
        if claims.contains(&pattern.claim) {
            continue;
        }
        if external && matches!(pattern.claim, Claim::Merged | Claim::Approved) {
            continue;
        }
        let affirmed = find_matches(&tokens, pattern)
            .into_iter()
            .any(|(first, last)| {
                let in_label = label_len.is_some_and(|n| first < n);
                let before = first.saturating_sub(4)..first;
                let hedged = before.clone().any(|i| {
                    let t = tokens[i].as_str();
                    clauses[i] == clauses[first] && (NEGATORS.contains(&t) || HEDGES.contains(&t))
                });
                let negated_inside = (first..=last).any(|i| {
                    let t = tokens[i].as_str();
                    !pattern.words.contains(&t) && NEGATORS.contains(&t)
                });
                let negated = hedged || negated_inside;
                // "approved by @alice" attributes the act to someone else.
                let by_other = matches!(pattern.claim, Claim::Merged | Claim::Approved)
                    && tokens.get(last + 1).is_some_and(|t| t == "by")
                    && !tokens[last + 2..tokens.len().min(last + 4)]
                        .iter()
                        .any(|t| SELF_WORDS.contains(&t.as_str()));
                let negated = negated || by_other;
                !(negated || (in_label && label_denied))
            });
        if affirmed {
            claims.push(pattern.claim);
        }
    }
    claims
}

/// Every (first, last) token index where the pattern's words occur in order with at
/// most `gap` other words between consecutive ones.
fn find_matches(tokens: &[String], pattern: &Pattern) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for start in 0..tokens.len() {
        if tokens[start] != pattern.words[0] {
            continue;
        }
        let mut at = start;
        let mut ok = true;
        for word in &pattern.words[1..] {
            let next =
                (at + 1..tokens.len().min(at + 2 + pattern.gap)).find(|&i| tokens[i] == *word);
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
