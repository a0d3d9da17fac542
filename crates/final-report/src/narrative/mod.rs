//! What the narrative claims, read without a model: labelled lines (`Label: value`,
//! Markdown list items, bold labels, table rows) and a closed list of claim phrases.
//!
//! A phrase matches when its words appear in order in one sentence, with at most a few
//! other words between them (`phrases.rs`, one row per phrase). Each match is a typed
//! [`Claim`]: its kind, its [`Subject`](claim::Subject) (this change, another pull request, someone
//! else, or an unknown one) and its [`Qualifier`](claim::Qualifier)s (negated, hedged, past, simulated),
//! decided once (`grammar.rs`, `context.rs`). A negating or hedging word (`not`,
//! `never`, `without`, `would`, `ready to be`, ...) before it in its clause or between
//! its words, or the label of a line whose value is negative (`Merged: no`), qualifies
//! it. A merge or approval whose act is attributed to someone else (`another reviewer
//! merged`, `approved by @alice`, `externally`), placed in the past (`earlier`, `two
//! weeks ago`) or about another change (`another PR`) is not a claim of this session.
//! A context word qualifies only its own clause, and inside a noun phrase only when
//! that phrase is the act's subject, object or agent: "I merged it after the earlier
//! CI run" is still a merge claim. The rules judge only asserted claims
//! ([`Narrative::claim`]); a stated claim set aside is a warning.

mod claim;
#[cfg(test)]
mod claim_tests;
mod context;
mod grammar;
mod phrases;
#[cfg(test)]
mod tests;

pub(crate) use claim::{Claim, ClaimKind, Reviewed};
use grammar::claims_in_sentence;

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

/// One sentence of the narrative and what it claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SentenceRead {
    /// 0-based line.
    pub line: usize,
    pub text: String,
    /// Every claim a phrase of the grammar reads in it, asserted or not.
    pub claims: Vec<Claim>,
    /// A state word (`merged`, `passed`, ...) of a sentence no phrase matched.
    pub unmatched_state: Option<String>,
}

impl SentenceRead {
    /// Why the sentence asserts state that is not checked against the handoff: its
    /// first stated claim about someone or something else, or a state word no phrase
    /// of the grammar reads.
    pub(crate) fn unchecked(&self) -> Option<String> {
        if let Some(because) = self.claims.iter().find_map(Claim::set_aside_because) {
            return Some(format!("not read as a claim about this change: {because}"));
        }
        self.unmatched_state.as_ref().map(|w| {
            format!("asserts state (`{w}`) but matches no claim of the grammar, so it is not checked against the handoff")
        })
    }
}

/// The narrative, analysed once per validation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Narrative {
    lines: Vec<String>,
    labels: Vec<Label>,
    sentences: Vec<SentenceRead>,
}

impl Narrative {
    pub(crate) fn parse(text: &str) -> Self {
        Self::parse_about(text, Reviewed::default())
    }

    /// Parse a narrative about the `reviewed` change: each claim's subject is decided
    /// against its pull request.
    pub(crate) fn parse_about(text: &str, reviewed: Reviewed) -> Self {
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
        let mut read = Vec::new();
        for (index, line) in lines.iter().enumerate() {
            let label = labels.iter().find(|l| l.line == index);
            for sentence in sentences(line) {
                let found = claims_in_sentence(sentence, index, label, reviewed);
                read.push(SentenceRead {
                    line: index,
                    text: sentence.trim().to_owned(),
                    claims: found.claims,
                    unmatched_state: found.unmatched_state,
                });
            }
        }
        Self {
            lines,
            labels,
            sentences: read,
        }
    }

    /// The sentences of the narrative, in order.
    pub(crate) fn sentences(&self) -> &[SentenceRead] {
        &self.sentences
    }

    /// Every claim of the narrative, in order, asserted or not.
    pub(crate) fn claims(&self) -> impl Iterator<Item = &Claim> {
        self.sentences.iter().flat_map(|s| &s.claims)
    }

    /// The first claim of `kind` the narrative asserts about this change (see
    /// [`Claim::asserted`]), if any.
    pub(crate) fn claim(&self, kind: ClaimKind) -> Option<&Claim> {
        self.claims().find(|c| c.kind == kind && c.asserted())
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
