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

mod context;
mod grammar;
#[cfg(test)]
mod tests;

use context::*;
use grammar::*;

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
