//! Mapping between byte offsets in a TOML document and dotted key paths, so every
//! manifest error can name the file, line, column and offending key.
//!
//! The toml crate reports serde errors with a byte span but keeps the key path private;
//! this module re-parses the document into its spanned form ([`toml::de::DeTable`]) and
//! answers "which key is at this offset" and "where is this key".

use std::fmt;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// One step of a key path: a table key or an array index (0-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    Key(String),
    Index(usize),
}

/// A dotted key path such as `specialist[1].select.include`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeyPath(Vec<Segment>);

impl KeyPath {
    pub(crate) fn root() -> Self {
        Self::default()
    }

    /// This path extended by a table key.
    pub(crate) fn key(&self, key: &str) -> Self {
        let mut next = self.clone();
        next.0.push(Segment::Key(key.to_owned()));
        next
    }

    /// This path extended by an array index (0-based).
    pub(crate) fn index(&self, index: usize) -> Self {
        let mut next = self.clone();
        next.0.push(Segment::Index(index));
        next
    }

    fn depth(&self) -> usize {
        self.0.len()
    }

    pub(crate) fn segments(&self) -> &[Segment] {
        &self.0
    }

    fn parent(&self) -> Option<Self> {
        let mut parent = self.clone();
        parent.0.pop()?;
        Some(parent)
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if i == 0 => write!(f, "{key}")?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// A 1-based line and column (column counted in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// 1-based line number.
    pub line: usize,
    /// 1-based column, in Unicode scalar values from the start of the line.
    pub column: usize,
}

struct Entry {
    path: KeyPath,
    key_span: Option<Range<usize>>,
    value_span: Range<usize>,
}

/// What a byte offset points at.
pub(crate) struct Hit {
    pub(crate) path: KeyPath,
    /// True when the offset lies on the key itself (rather than its value).
    pub(crate) on_key: bool,
}

/// Spanned view of one TOML document.
pub(crate) struct Locator<'a> {
    text: &'a str,
    entries: Vec<Entry>,
}

impl<'a> Locator<'a> {
    /// Parses `text`. A syntax error is returned as the toml crate reports it.
    pub(crate) fn new(text: &'a str) -> Result<Self, toml::de::Error> {
        let document = DeTable::parse(text)?;
        let mut entries = Vec::new();
        collect_table(&KeyPath::root(), document.get_ref(), &mut entries);
        Ok(Self { text, entries })
    }

    /// The 1-based line and column of a byte offset.
    pub(crate) fn position(&self, offset: usize) -> Position {
        position_in(self.text, offset)
    }

    /// The key whose key or value covers `offset`: the narrowest span wins, then the
    /// deepest path (an array of tables shares its first element's header span).
    pub(crate) fn hit(&self, offset: usize) -> Option<Hit> {
        let mut best: Option<(usize, usize, Hit)> = None;
        for entry in &self.entries {
            let candidates = [
                (entry.key_span.clone(), true),
                (Some(entry.value_span.clone()), false),
            ];
            for (span, on_key) in candidates {
                let Some(span) = span else { continue };
                if !(span.start <= offset && offset < span.end) {
                    continue;
                }
                let width = span.end - span.start;
                let depth = entry.path.depth();
                let better = match &best {
                    None => true,
                    Some((w, d, _)) => width < *w || (width == *w && depth > *d),
                };
                if better {
                    let hit = Hit {
                        path: entry.path.clone(),
                        on_key,
                    };
                    best = Some((width, depth, hit));
                }
            }
        }
        best.map(|(_, _, hit)| hit)
    }

    /// Every key written in the document with the byte offset of the key.
    pub(crate) fn keys(&self) -> impl Iterator<Item = (&KeyPath, usize)> {
        self.entries
            .iter()
            .filter_map(|e| e.key_span.as_ref().map(|span| (&e.path, span.start)))
    }

    /// Where `path` is written: its key when `prefer_key` is true, else its value (each
    /// falling back to the other). A path absent from the document (a missing key) is
    /// placed at its nearest written ancestor, e.g. the `[[specialist]]` header.
    pub(crate) fn find(&self, path: &KeyPath, prefer_key: bool) -> Option<Position> {
        let mut path = path.clone();
        loop {
            if let Some(entry) = self.entries.iter().find(|e| e.path == path) {
                let offset = match (&entry.key_span, prefer_key) {
                    (Some(key), true) => key.start,
                    _ => entry.value_span.start,
                };
                return Some(self.position(offset));
            }
            path = path.parent()?;
        }
    }
}

fn collect_table(path: &KeyPath, table: &DeTable<'_>, out: &mut Vec<Entry>) {
    for (key, value) in table.iter() {
        let child = path.key(key.get_ref());
        out.push(Entry {
            path: child.clone(),
            key_span: Some(key.span()),
            value_span: value.span(),
        });
        collect_value(&child, value, out);
    }
}

fn collect_value(path: &KeyPath, value: &Spanned<DeValue<'_>>, out: &mut Vec<Entry>) {
    match value.get_ref() {
        DeValue::Table(table) => collect_table(path, table, out),
        DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let child = path.index(i);
                out.push(Entry {
                    path: child.clone(),
                    key_span: None,
                    value_span: item.span(),
                });
                collect_value(&child, item, out);
            }
        }
        _ => {}
    }
}

/// The 1-based line and column of a byte offset in `text` (offsets past the end clamp
/// to the end).
pub(crate) fn position_in(text: &str, offset: usize) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    Position { line, column }
}
